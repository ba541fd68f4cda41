/**
 * The load generator for the limits run, on rhea 3.0.5 (an independent client, so the broker is
 * measured, not our client): many idle connections, many attached links, a bulk publisher with a
 * window of unsettled messages, and a probe that times one send -> receive round trip.
 */
import rhea from 'rhea';

export type Conn = rhea.Connection;

export function open(port: number, id: string, timeoutMs = 60_000): Promise<Conn> {
  const container = rhea.create_container({ id });
  const conn = container.connect({ host: '127.0.0.1', port, reconnect: false } as rhea.ConnectionOptions);
  return new Promise((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`connection ${id}: no Open within ${timeoutMs} ms`)),
      timeoutMs,
    );
    conn.once('connection_open', () => {
      clearTimeout(t);
      resolve(conn);
    });
    const fail = (what: string) => (ctx: rhea.EventContext) => {
      clearTimeout(t);
      reject(
        new Error(`connection ${id}: ${what} ${JSON.stringify(ctx.connection?.error ?? ctx.error ?? '')}`),
      );
    };
    conn.once('connection_close', fail('closed'));
    conn.once('connection_error', fail('error'));
    conn.once('disconnected', fail('disconnected'));
  });
}

export function close(conn: Conn): Promise<void> {
  return new Promise((resolve) => {
    if (!conn.is_open()) {
      resolve();
      return;
    }
    const t = setTimeout(resolve, 10_000);
    const done = () => {
      clearTimeout(t);
      resolve();
    };
    conn.once('connection_close', done);
    conn.once('disconnected', done);
    conn.close();
  });
}

/** Attaches `n` links on `conn` (alternating senders and receivers with a small prefetch). */
export function attachLinks(
  conn: Conn,
  n: number,
  queueOf: (i: number) => string,
  timeoutMs = 120_000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let opened = 0;
    const t = setTimeout(
      () => reject(new Error(`only ${opened}/${n} links attached in ${timeoutMs} ms`)),
      timeoutMs,
    );
    const one = () => {
      if (++opened === n) {
        clearTimeout(t);
        resolve();
      }
    };
    for (let i = 0; i < n; i++) {
      const address = queueOf(i);
      if (i % 2 === 0) conn.open_sender({ target: { address }, name: `s${i}` }).once('sendable', one);
      else
        conn
          .open_receiver({ source: { address }, name: `r${i}`, credit_window: 5 })
          .once('receiver_open', one);
    }
    conn.once('connection_close', () => reject(new Error('connection closed while attaching')));
  });
}

/**
 * Publishes `count` messages of `body` to `address`, keeping up to the broker's credit in
 * flight; resolves once every one was settled `accepted` (rejects on any other outcome).
 */
export function publish(conn: Conn, address: string, count: number, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const sender = conn.open_sender({ target: { address } });
    let sent = 0;
    let accepted = 0;
    const pump = () => {
      while (sent < count && sender.sendable()) {
        sender.send({ body: rhea.message.data_section(body) }, undefined, undefined);
        sent++;
      }
    };
    sender.on('sendable', pump);
    sender.on('accepted', () => {
      if (++accepted === count) {
        sender.close();
        resolve();
      }
    });
    for (const ev of ['rejected', 'released', 'modified'] as const)
      sender.on(ev, (ctx) =>
        reject(new Error(`publish: ${ev} ${JSON.stringify(ctx.delivery?.remote_state ?? '')}`)),
      );
    sender.on('sender_close', () => {
      if (accepted < count) reject(new Error(`publish: sender closed after ${accepted}/${count}`));
    });
    conn.once('disconnected', () => reject(new Error(`publish: disconnected after ${accepted}/${count}`)));
  });
}

/** One sender and one receiver on a probe queue: `roundTrip()` times send -> delivery, in ms. */
export class Probe {
  private readonly sender: rhea.Sender;
  private readonly receiver: rhea.Receiver;
  private waiting: ((v: number) => void) | undefined;
  private sentAt = 0;
  private seq = 0;
  readonly opened: Promise<void>;

  constructor(conn: Conn, address: string) {
    this.sender = conn.open_sender({ target: { address } });
    this.receiver = conn.open_receiver({ source: { address }, credit_window: 10 });
    this.receiver.on('message', () => {
      const w = this.waiting;
      this.waiting = undefined;
      w?.(performance.now() - this.sentAt);
    });
    this.opened = Promise.all([
      new Promise<void>((r) => this.sender.once('sendable', () => r())),
      new Promise<void>((r) => this.receiver.once('receiver_open', () => r())),
    ]).then(() => undefined);
  }

  roundTrip(timeoutMs = 30_000): Promise<number> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`probe: no round trip within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting = (ms) => {
        clearTimeout(t);
        resolve(ms);
      };
      this.sentAt = performance.now();
      this.sender.send({ body: `probe-${this.seq++}` });
    });
  }
}

/** Probes every `everyMs` until `stop()`; the samples go to `out`. */
export function probeLoop(probe: Probe, everyMs: number, out: number[]): { stop: () => Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      out.push(await probe.roundTrip());
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Receives `n` messages from `address` (credit `n`), resolves with ms to the first and to all. */
export function drainSome(
  conn: Conn,
  address: string,
  n: number,
): Promise<{ firstMs: number; allMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = 0;
    let got = 0;
    const r = conn.open_receiver({ source: { address }, credit_window: 0, autoaccept: true });
    r.once('receiver_open', () => r.add_credit(n));
    r.on('message', () => {
      if (got++ === 0) first = performance.now() - t0;
      if (got === n) {
        r.close();
        resolve({ firstMs: first, allMs: performance.now() - t0 });
      }
    });
    r.on('receiver_close', () => {
      if (got < n) reject(new Error(`drain: receiver closed after ${got}/${n}`));
    });
  });
}

export function stats(samples: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    s.length === 0 ? Number.NaN : Math.round(s[Math.min(s.length - 1, Math.floor(q * s.length))]! * 10) / 10;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: at(1) };
}
