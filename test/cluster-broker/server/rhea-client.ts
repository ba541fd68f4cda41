/**
 * Promise wrappers around rhea 3.0.5 (an independent AMQP 1.0 client) for the broker's
 * integration tests: connect, send and wait for outcomes, receive with manual settlement.
 */
import rhea from 'rhea';

export type RheaConnection = rhea.Connection;
export type RheaDelivery = rhea.Delivery;
export type RheaMessage = rhea.Message;

export interface ConnectOptions {
  port: number;
  host?: string;
  username?: string;
  password?: string;
  containerId?: string;
  tls?: boolean;
  idleTimeoutMs?: number;
}

/** Opens a connection; resolves on Open, rejects on close/error/disconnect before it. */
export function connect(opts: ConnectOptions): Promise<RheaConnection> {
  const container = rhea.create_container(opts.containerId ? { id: opts.containerId } : {});
  const o: rhea.ConnectionOptions = {
    host: opts.host ?? '127.0.0.1',
    port: opts.port,
    reconnect: false,
  } as rhea.ConnectionOptions;
  const r = o as unknown as Record<string, unknown>;
  if (opts.username !== undefined) r.username = opts.username;
  if (opts.password !== undefined) r.password = opts.password;
  if (opts.tls) {
    r.transport = 'tls';
    r.rejectUnauthorized = false;
  }
  if (opts.idleTimeoutMs !== undefined) r.idle_time_out = opts.idleTimeoutMs;
  const conn = container.connect(o);
  return new Promise((resolve, reject) => {
    conn.once('connection_open', () => resolve(conn));
    conn.once('connection_close', (ctx) =>
      reject(new Error(`closed: ${JSON.stringify(ctx.connection.error)}`)),
    );
    conn.once('connection_error', (ctx) =>
      reject(new Error(`error: ${JSON.stringify(ctx.connection.error)}`)),
    );
    conn.once('disconnected', (ctx) => reject(new Error(`disconnected: ${String(ctx.error ?? '')}`)));
  });
}

/**
 * Connects and waits for the broker to end the connection (for refusals that come as Open then
 * Close): resolves with whether Open arrived and the close error; `stillOpen` after `waitMs`.
 */
export function connectExpectingClose(
  opts: ConnectOptions,
  waitMs = 5000,
): Promise<{ opened: boolean; stillOpen: boolean; error?: { condition?: string; description?: string } }> {
  const container = rhea.create_container(opts.containerId ? { id: opts.containerId } : {});
  const conn = container.connect({
    host: opts.host ?? '127.0.0.1',
    port: opts.port,
    reconnect: false,
  } as rhea.ConnectionOptions);
  let opened = false;
  conn.on('connection_open', () => {
    opened = true;
  });
  conn.on('connection_error', () => {});
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      resolve({ opened, stillOpen: true });
      conn.close();
    }, waitMs);
    const done = () => {
      clearTimeout(timer);
      const error = (conn as unknown as { error?: { condition?: string; description?: string } }).error;
      resolve(error ? { opened, stillOpen: false, error } : { opened, stillOpen: false });
    };
    conn.once('connection_close', done);
    conn.once('disconnected', done);
  });
}

/** Resolves with the connection's close error (or undefined) once the broker closes it or the socket drops. */
export function closed(
  conn: RheaConnection,
): Promise<{ condition?: string; description?: string } | undefined> {
  return new Promise((resolve) => {
    const done = () =>
      resolve((conn as unknown as { error?: { condition?: string; description?: string } }).error);
    conn.once('connection_close', done);
    conn.once('disconnected', done);
  });
}

export function closeConnection(conn: RheaConnection): Promise<void> {
  return new Promise((resolve) => {
    if (!conn.is_open()) {
      resolve();
      return;
    }
    conn.once('connection_close', () => resolve());
    conn.once('disconnected', () => resolve());
    conn.close();
  });
}

export interface Outcome {
  state: string;
  error?: { condition?: string; description?: string };
}

/** Sends every message on one sender (waiting for credit) and resolves with each outcome, in order. */
export function sendAll(
  conn: RheaConnection,
  address: string,
  messages: RheaMessage[],
  linkOpts: Record<string, unknown> = {},
): Promise<Outcome[]> {
  return new Promise((resolve, reject) => {
    const sender = conn.open_sender({ target: { address }, ...linkOpts });
    const outcomes: Outcome[] = new Array(messages.length);
    let next = 0;
    let done = 0;
    const pump = () => {
      while (next < messages.length && sender.sendable()) {
        const i = next++;
        const d = sender.send(messages[i]!);
        (d as unknown as { index: number }).index = i;
      }
    };
    const onClose = (ctx: rhea.EventContext): void => {
      if (done < messages.length)
        reject(new Error(`connection closed: ${JSON.stringify(ctx.connection.error)}`));
    };
    const onDisconnected = (): void => {
      if (done < messages.length) reject(new Error('disconnected'));
    };
    const settle = (state: string) => (ctx: rhea.EventContext) => {
      const d = ctx.delivery as unknown as { index: number; remote_state?: { error?: Outcome['error'] } };
      const o: Outcome = { state };
      const err = d.remote_state?.error;
      if (err) o.error = { condition: String(err.condition), description: err.description };
      outcomes[d.index] = o;
      if (++done === messages.length) {
        // the connection is shared by many calls: leave no listener of this one on it
        conn.removeListener('connection_close', onClose);
        conn.removeListener('disconnected', onDisconnected);
        sender.close();
        resolve(outcomes);
      }
    };
    sender.on('sendable', pump);
    sender.on('accepted', settle('accepted'));
    sender.on('rejected', settle('rejected'));
    sender.on('released', settle('released'));
    sender.on('modified', settle('modified'));
    sender.on('sender_close', (ctx) => {
      if (done < messages.length) reject(new Error(`sender closed: ${JSON.stringify(ctx.sender.error)}`));
    });
    conn.once('connection_close', onClose);
    conn.once('disconnected', onDisconnected);
  });
}

export interface Received {
  message: RheaMessage;
  delivery: RheaDelivery;
}

/**
 * A receiver with manual settlement: `next(n)` resolves with the next n deliveries (credit is
 * granted as asked), `settled` resolves when the broker settles a delivery (rcv-settle-mode second).
 */
export class TestReceiver {
  readonly link: rhea.Receiver;
  private buffered: Received[] = [];
  private waiter: (() => void) | undefined;
  error: { condition?: string; description?: string } | undefined;
  closedByPeer = false;
  readonly opened: Promise<void>;
  readonly settledDeliveries: RheaDelivery[] = [];

  constructor(conn: RheaConnection, address: string, opts: Record<string, unknown> = {}) {
    this.link = conn.open_receiver({ source: { address }, credit_window: 0, autoaccept: false, ...opts });
    this.link.on('message', (ctx) => {
      this.buffered.push({ message: ctx.message!, delivery: ctx.delivery! });
      this.waiter?.();
    });
    this.link.on('settled', (ctx) => {
      this.settledDeliveries.push(ctx.delivery!);
      this.waiter?.();
    });
    const onClose = (ctx: rhea.EventContext) => {
      this.closedByPeer = true;
      this.error = (ctx.receiver as unknown as { error?: TestReceiver['error'] }).error;
      this.waiter?.();
    };
    this.link.on('receiver_close', onClose);
    this.link.on('receiver_error', onClose);
    this.opened = new Promise((resolve) => this.link.once('receiver_open', () => resolve()));
  }

  /** Grants `n` credit and waits for n messages (rejects after timeoutMs). */
  async next(n: number, timeoutMs = 10_000): Promise<Received[]> {
    if (n > this.buffered.length) this.link.add_credit(n - this.buffered.length);
    await this.until(() => this.buffered.length >= n, timeoutMs, `${n} messages`);
    return this.buffered.splice(0, n);
  }

  /** Waits `ms` and returns whatever arrived (for "nothing must arrive" checks). */
  async drainFor(ms: number): Promise<Received[]> {
    await new Promise((r) => setTimeout(r, ms));
    return this.buffered.splice(0);
  }

  async until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (this.closedByPeer && !cond())
        throw new Error(`receiver closed (${JSON.stringify(this.error)}) waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.waiter = undefined;
    }
  }
}
