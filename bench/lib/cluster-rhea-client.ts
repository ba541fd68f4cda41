/**
 * The cluster bench's client (bench/cluster.ts), rhea on one connection: send with a re-send of
 * what was not accepted after a reconnect (as a failover client would, same message-ids), and
 * receive with auto-accept.
 */
import rhea from 'rhea';

export function connect(port: number): Promise<rhea.Connection> {
  const c = rhea
    .create_container()
    .connect({ host: '127.0.0.1', port, reconnect: false } as rhea.ConnectionOptions);
  return new Promise((resolve, reject) => {
    c.once('connection_open', () => resolve(c));
    c.once('connection_close', () => reject(new Error('closed before open')));
    c.once('disconnected', () => reject(new Error('disconnected before open')));
  });
}

function closeError(c: rhea.Connection): string {
  const e = (
    c as unknown as { remote?: { close?: { error?: { condition?: string; description?: string } } } }
  ).remote?.close?.error;
  return e ? `${e.condition}: ${e.description}` : 'no error';
}

export function close(c: rhea.Connection): Promise<void> {
  return new Promise((resolve) => {
    if (!c.is_open()) return resolve();
    c.once('connection_close', () => resolve());
    c.once('disconnected', () => resolve());
    c.close();
  });
}

/**
 * Sends messages `tag-0..n-1` (message-id = its name) and resolves once every one was accepted.
 * Like a failover client: when the broker closes the connection (a leader change under load:
 * outcome unknown), it reconnects and re-sends what was not yet accepted, with the same
 * message-ids (the broker's dedup keeps each once).
 */
export async function sendN(
  port: number,
  address: string,
  n: number,
  body: Buffer,
  tag: string,
): Promise<SendStats> {
  const t0 = performance.now();
  const accepted = new Set<number>();
  let reconnects = 0;
  for (;;) {
    const c = await connect(port).catch(() => undefined);
    if (c) {
      const ok = await sendOnce(c, address, n, body, tag, accepted);
      void close(c);
      if (ok) return { seconds: (performance.now() - t0) / 1000, reconnects };
    }
    reconnects++;
    if (performance.now() - t0 > 300_000) throw new Error(`send did not finish: ${accepted.size}/${n}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface SendStats {
  seconds: number;
  reconnects: number;
}

/** One connection's worth of sending; false when the connection closed before all were accepted. */
export function sendOnce(
  c: rhea.Connection,
  address: string,
  n: number,
  body: Buffer,
  tag: string,
  accepted: Set<number>,
): Promise<boolean> {
  return new Promise((resolve) => {
    const s = c.open_sender({ target: { address } });
    let next = 0;
    s.on('sendable', () => {
      while (s.sendable()) {
        while (next < n && accepted.has(next)) next++;
        if (next >= n) return;
        const i = next++;
        const d = s.send({ message_id: `${tag}-${i}`, body: rhea.message.data_section(body) });
        (d as unknown as { index: number }).index = i;
      }
    });
    s.on('accepted', (ctx) => {
      accepted.add((ctx.delivery as unknown as { index: number }).index);
      if (accepted.size === n) {
        s.close();
        resolve(true);
      }
    });
    s.on('rejected', () => resolve(false));
    s.on('released', () => resolve(false));
    c.once('connection_close', () => resolve(false));
    c.once('disconnected', () => resolve(false));
  });
}

/** Receives n messages (auto-accept, credit window 1000); resolves with the seconds it took. */
export function receiveN(c: rhea.Connection, address: string, n: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const r = c.open_receiver({ source: { address }, credit_window: 1000, autoaccept: true });
    let got = 0;
    r.on('message', () => {
      if (++got === n) {
        const secs = (performance.now() - t0) / 1000;
        r.close();
        resolve(secs);
      }
    });
    c.once('connection_close', () =>
      reject(new Error(`connection closed after ${got}/${n}: ${closeError(c)}`)),
    );
  });
}
