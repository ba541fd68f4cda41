/**
 * rhea 3.0.5 helpers for the cluster's multi-process tests: connect (keeping the Open
 * properties), send with outcomes, receive-and-accept, wait for a close error.
 */
import rhea from 'rhea';

export type Conn = rhea.Connection;

export interface CloseError {
  condition?: string;
  description?: string;
}

export interface Opened {
  conn: Conn;
  /** The broker's Open properties (decoded by rhea). */
  properties: Record<string, unknown> | undefined;
  offeredCapabilities: string[];
  /** Resolves with the connection's close error (undefined: closed without one / disconnected). */
  closed: Promise<CloseError | undefined>;
}

/** The error of the peer's Close (rhea keeps the remote Close frame). */
export function closeError(conn: Conn): CloseError | undefined {
  const c = conn as unknown as { remote?: { close?: { error?: CloseError } }; error?: CloseError };
  return c.remote?.close?.error ?? c.error;
}

function caps(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

export function url2port(url: string): number {
  return Number(new URL(url).port);
}

/** Opens a connection (no reconnect); resolves on Open, rejects on a close/disconnect before it. */
export function open(port: number, containerId?: string): Promise<Opened> {
  const container = rhea.create_container(containerId ? { id: containerId } : {});
  const conn = container.connect({ host: '127.0.0.1', port, reconnect: false } as rhea.ConnectionOptions);
  const closed = new Promise<CloseError | undefined>((resolve) => {
    const done = (): void => resolve(closeError(conn));
    conn.once('connection_close', done);
    conn.once('disconnected', done);
  });
  return new Promise((resolve, reject) => {
    conn.once('connection_open', () => {
      const remote = (
        conn as unknown as {
          remote: { open: { properties?: Record<string, unknown>; offered_capabilities?: unknown } };
        }
      ).remote.open;
      resolve({
        conn,
        properties: remote.properties,
        offeredCapabilities: caps(remote.offered_capabilities),
        closed,
      });
    });
    conn.once('connection_close', () => reject(new Error(`closed: ${JSON.stringify(closeError(conn))}`)));
    conn.once('disconnected', (ctx) => reject(new Error(`disconnected: ${String(ctx.error ?? '')}`)));
  });
}

/** Connects and resolves with the Open properties and the close error that follows at once. */
export function openExpectingClose(
  port: number,
  timeoutMs = 5000,
): Promise<{
  properties: Record<string, unknown> | undefined;
  error: CloseError | undefined;
  opened: boolean;
}> {
  const container = rhea.create_container({});
  const conn = container.connect({ host: '127.0.0.1', port, reconnect: false } as rhea.ConnectionOptions);
  return new Promise((resolve, reject) => {
    let opened = false;
    let properties: Record<string, unknown> | undefined;
    const timer = setTimeout(() => {
      conn.close();
      reject(new Error(`still open after ${timeoutMs} ms`));
    }, timeoutMs);
    conn.once('connection_open', () => {
      opened = true;
      properties = (conn as unknown as { remote: { open: { properties?: Record<string, unknown> } } }).remote
        .open.properties;
    });
    const done = (): void => {
      clearTimeout(timer);
      resolve({ properties, error: closeError(conn), opened });
    };
    conn.once('connection_close', done);
    conn.once('disconnected', done);
  });
}

export function closeConn(conn: Conn): Promise<void> {
  return new Promise((resolve) => {
    if (!conn.is_open()) {
      resolve();
      return;
    }
    const t = setTimeout(resolve, 3000);
    conn.once('connection_close', () => {
      clearTimeout(t);
      resolve();
    });
    conn.once('disconnected', () => {
      clearTimeout(t);
      resolve();
    });
    conn.close();
  });
}

/**
 * Sends `bodies` (message-id = body) and resolves with each outcome ('accepted', ...) in order.
 * `dedup`: the sender desires `quorate:dedup` (the broker drops message-ids it already enqueued).
 */
export function sendAll(
  conn: Conn,
  address: string,
  bodies: string[],
  options: { dedup?: boolean } = {},
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const sender = conn.open_sender({
      target: { address },
      ...(options.dedup ? { desired_capabilities: ['quorate:dedup'] } : {}),
    });
    const out: string[] = new Array(bodies.length);
    let next = 0;
    let done = 0;
    const pump = (): void => {
      while (next < bodies.length && sender.sendable()) {
        const i = next++;
        const d = sender.send({ message_id: bodies[i], body: bodies[i] });
        (d as unknown as { index: number }).index = i;
      }
    };
    const settle = (state: string) => (ctx: rhea.EventContext) => {
      out[(ctx.delivery as unknown as { index: number }).index] = state;
      if (++done === bodies.length) {
        sender.close();
        resolve(out);
      }
    };
    sender.on('sendable', pump);
    sender.on('accepted', settle('accepted'));
    sender.on('rejected', settle('rejected'));
    sender.on('released', settle('released'));
    sender.on('modified', settle('modified'));
    const fail = (why: string) => () => {
      if (done < bodies.length) reject(new Error(`${why} after ${done}/${bodies.length} outcomes`));
    };
    sender.on('sender_close', fail('sender closed'));
    conn.once('connection_close', () => fail(`connection closed ${JSON.stringify(closeError(conn))}`)());
    conn.once('disconnected', fail('disconnected'));
  });
}

/**
 * A receiver that accepts what it gets (rcv-settle-mode first) and records the bodies.
 * `until(n)` resolves once n messages arrived in total.
 */
export class Collector {
  readonly bodies: string[] = [];
  readonly link: rhea.Receiver;
  error: CloseError | undefined;
  private waiters: Array<{ done: () => boolean; resolve: () => void }> = [];

  /** `credit`: a window rhea keeps topped up; `exactly`: that much credit once, never more. */
  constructor(
    conn: Conn,
    address: string,
    opts: { credit?: number; exactly?: number; name?: string; settle?: boolean } = {},
  ) {
    this.link = conn.open_receiver({
      source: { address },
      credit_window: opts.exactly !== undefined ? 0 : (opts.credit ?? 50),
      autoaccept: opts.settle !== false,
      ...(opts.name ? { name: opts.name } : {}),
    });
    if (opts.exactly !== undefined) this.link.add_credit(opts.exactly);
    this.link.on('message', (ctx) => {
      const b = ctx.message?.body;
      this.bodies.push(typeof b === 'string' ? b : JSON.stringify(b));
      this.check();
    });
    this.link.on('receiver_close', (ctx) => {
      this.error = (ctx.receiver as unknown as { error?: CloseError }).error;
    });
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      const done = w.done();
      if (done) w.resolve();
      return !done;
    });
  }

  /** Resolves once `n` messages arrived (counting redeliveries). */
  until(n: number, timeoutMs = 30_000): Promise<void> {
    return this.waitFor(() => this.bodies.length >= n, `${n} messages`, timeoutMs);
  }

  /**
   * Grants `credit` more with drain set and resolves at the broker's answer with how many
   * messages had arrived by then (the answer comes after everything the broker had for the credit).
   */
  drain(credit: number, timeoutMs = 30_000): Promise<number> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () => reject(new Error(`no drain answer within ${timeoutMs} ms: got ${this.bodies.length}`)),
        timeoutMs,
      );
      this.link.once('receiver_drained', () => {
        clearTimeout(t);
        resolve(this.bodies.length);
      });
      this.link.add_credit(credit);
      this.link.drain_credit();
    });
  }

  /** Resolves once a message with this body arrived. */
  untilBody(body: string, timeoutMs = 30_000): Promise<void> {
    return this.waitFor(() => this.bodies.includes(body), `the message ${body}`, timeoutMs);
  }

  private waitFor(done: () => boolean, what: string, timeoutMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(
        () =>
          reject(
            new Error(
              `no ${what} within ${timeoutMs} ms: got ${this.bodies.length} (link ${this.error ? JSON.stringify(this.error) : 'open'}; last ${this.bodies.slice(-3).join(',')})`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({
        done,
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
      });
    });
  }
}
