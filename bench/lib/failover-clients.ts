/**
 * The failover bench's clients under test (bench/failover.ts): a producer keeping `window` sends
 * in flight, on our client (failover built in) or on rhea (its reconnect, rotating over the
 * members' ports by hand), and what the kill loop asks of each.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import rhea from 'rhea';
import { connect } from '../../src/index.js';
import { portOf } from './failover-healthy.js';

/** What a client under test offers the kill loop. */
export interface ClientUnderTest {
  name: string;
  /** AMQP port of the member the client is connected to now */
  currentPort(): number | undefined;
  /** resolves at the first send accepted after this call */
  nextAccept(): Promise<number>;
  /** what the client did since `since` (performance.now() ms), one line each, times relative to it */
  traceSince?(since: number): string[];
  stop(): Promise<{
    attempted: number;
    accepted: Set<string>;
    unresolved: number;
    sent: Set<string>;
    /** failovers the producer went through, and the sends it re-sent in them (quorate only) */
    failovers?: number;
    resent?: number;
  }>;
}

/** Our client: failover built in. */
export async function quorateClient(
  urls: string[],
  queue: string,
  window: number,
  hang: boolean,
): Promise<ClientUnderTest> {
  // a hang is measured with the default options (the 10 s idle timeout is what it must not wait)
  const conn = await connect({
    urls,
    containerId: 'bench-failover-quorate',
    ...(hang ? {} : { idleTimeoutMs: 2_000 }),
  });
  const sender = await conn.openSender(queue);
  // what the client did, for the per-hang trace: [performance.now(), line]
  const trace: [number, string][] = [];
  let failovers = 0;
  let resent = 0;
  conn.on('reconnecting', (i) =>
    trace.push([
      performance.now(),
      `attempt ${i.attempt} -> ${portOf(i.url)}${i.error ? ` (previous: ${i.error.message.slice(0, 90)})` : ''}`,
    ]),
  );
  conn.on('failover', (f) => {
    failovers++;
    resent += f.resent;
    const at = performance.now();
    trace.push([at - f.durationMs, `connection to ${portOf(f.from)} lost: ${f.reason?.slice(0, 120)}`]);
    trace.push([
      at,
      `failover to ${portOf(f.to)} done in ${Math.round(f.durationMs)} ms, ${f.resent} re-sent`,
    ]);
  });
  const waiters: ((t: number) => void)[] = [];
  const accepted = new Set<string>();
  const sent = new Set<string>();
  let attempted = 0;
  let stopping = false;
  const loop = (async () => {
    const inflight = new Set<Promise<unknown>>();
    let n = 0;
    while (!stopping) {
      const id = `quorate-${++n}`;
      attempted++;
      sent.add(id);
      const p = sender
        .send({ messageId: id, durable: true, body: n }, { timeoutMs: 60_000 })
        .then((r) => {
          if (r.state !== 'accepted') return;
          accepted.add(id);
          const t = performance.now();
          for (const w of waiters.splice(0)) w(t);
        })
        .catch(() => undefined)
        .finally(() => inflight.delete(p));
      inflight.add(p);
      while (inflight.size >= window) await Promise.race(inflight);
    }
    await Promise.all(inflight);
  })();
  return {
    name: 'quorate',
    currentPort: () => (conn.url ? Number(new URL(conn.url).port) : undefined),
    nextAccept: () => new Promise((r) => waiters.push(r)),
    traceSince: (since) =>
      trace
        .splice(0)
        .filter(([t]) => t >= since - 1)
        .sort((a, b) => a[0] - b[0])
        .map(([t, line]) => `+${Math.round(t - since)} ms ${line}`),
    async stop() {
      stopping = true;
      await loop;
      await conn.close();
      return { attempted, accepted, unresolved: 0, sent, failovers, resent };
    },
  };
}

/** rhea: its reconnect, rotating over the members' ports by hand; unsettled sends die with the socket. */
export async function rheaClient(ports: number[], queue: string, window: number): Promise<ClientUnderTest> {
  const container = rhea.create_container({ id: 'bench-failover-rhea' });
  let next = 0;
  let currentPort: number | undefined;
  let lastDialled: number | undefined;
  const conn = container.connect({
    connection_details: () => {
      lastDialled = ports[next++ % ports.length]!;
      return { port: lastDialled, host: '127.0.0.1' };
    },
    reconnect: true,
    initial_reconnect_delay: 20,
    max_reconnect_delay: 1_000,
    idle_time_out: 2_000,
  } as unknown as rhea.ConnectionOptions);
  const sender = conn.open_sender({ target: { address: queue } });
  const unsettled = new Map<rhea.Delivery, string>();
  const accepted = new Set<string>();
  const sent = new Set<string>();
  let unresolved = 0;
  let attempted = 0;
  const waiters: ((t: number) => void)[] = [];
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  conn.on('connection_open', () => {
    currentPort = lastDialled;
    poke();
  });
  conn.on('disconnected', () => {
    currentPort = undefined;
    // rhea forgets unsettled deliveries on disconnect: no outcome will ever come for them
    unresolved += unsettled.size;
    unsettled.clear();
    poke();
  });
  const settle = (ctx: rhea.EventContext, ok: boolean) => {
    const d = ctx.delivery;
    const id = d ? unsettled.get(d) : undefined;
    if (d) unsettled.delete(d);
    if (ok && id) {
      accepted.add(id);
      const t = performance.now();
      for (const w of waiters.splice(0)) w(t);
    }
    poke();
  };
  sender.on('accepted', (ctx) => settle(ctx, true));
  sender.on('rejected', (ctx) => settle(ctx, false));
  sender.on('released', (ctx) => settle(ctx, false));
  sender.on('modified', (ctx) => settle(ctx, false));
  sender.on('sendable', poke);
  await new Promise<void>((r) => sender.once('sendable', () => r()));
  let stopping = false;
  const loop = (async () => {
    let n = 0;
    while (!stopping) {
      if (currentPort === undefined || !sender.sendable() || unsettled.size >= window) {
        await Promise.race([new Promise<void>((r) => (wake = r)), sleep(50)]);
        continue;
      }
      const id = `rhea-${++n}`;
      attempted++;
      sent.add(id);
      const d = sender.send({ message_id: id, durable: true, body: n });
      unsettled.set(d, id);
    }
    const deadline = Date.now() + 10_000;
    while (unsettled.size > 0 && Date.now() < deadline) await sleep(20);
  })();
  return {
    name: 'rhea',
    currentPort: () => currentPort,
    nextAccept: () => new Promise((r) => waiters.push(r)),
    async stop() {
      stopping = true;
      await loop;
      unresolved += unsettled.size;
      conn.close();
      return { attempted, accepted, unresolved, sent };
    },
  };
}
