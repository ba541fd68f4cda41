/**
 * A member that accepts TCP connections but never says a byte (a stopped process: the kernel
 * still accepts into its backlog) must not cost a failover the whole 10 s attempt timeout
 * (docs/failover.md#silent-member). The client uses broker A; the next member in its list is a
 * plain TCP server that never writes, then broker B. A stops; the failover dials the silent member,
 * gives it up after its first-byte deadline (1 s by default), and the next send is accepted by B
 * well before the 10 s an attempt used to wait for Open.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker } from '../../src/broker.js';
import { type ConnectionEvents, connect } from '../../src/index.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** Far under the old 10 s attempt timeout, generous for a loaded machine. */
const MOVES_ON_WITHIN_MS = 5_000;

/** A TCP server on 127.0.0.1 that accepts and never writes; counts the connections it got. */
async function silentServer(): Promise<{
  url: string;
  port: number;
  accepted: () => number;
  close: () => Promise<void>;
}> {
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const srv = net.createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      srv.close(() => resolve());
    });
  cleanups.push(close);
  const { port } = srv.address() as net.AddressInfo;
  return { url: `amqp://127.0.0.1:${port}`, port, accepted: () => accepted, close };
}

/** Brokers a and b, the silent member between them in the list (default options), a sender. */
async function brokersAroundASilentMember(queue: string) {
  const a = await startBroker({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => a.stop());
  const b = await startBroker({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => b.stop());
  const silent = await silentServer();
  const conn = await connect({ urls: [a.url, silent.url, b.url], randomizeMembers: false });
  cleanups.push(() => conn.close());
  const failovers: ConnectionEvents['failover'][0][] = [];
  conn.on('failover', (e) => failovers.push(e));
  return { a, b, silent, failovers, sender: await conn.openSender(queue) };
}

describe('a failover past a member that accepts but never speaks', () => {
  it('gives it up after its first-byte deadline, not the attempt timeout', async () => {
    const { a, b, silent, failovers, sender } = await brokersAroundASilentMember('q-silent');
    expect((await sender.send({ body: 'before' })).state).toBe('accepted');

    await a.stop();
    const stoppedAt = performance.now();
    const r = await sender.send({ body: 'after' }, { timeoutMs: 30_000 });
    const tookMs = performance.now() - stoppedAt;

    expect(r.state).toBe('accepted');
    expect(silent.accepted()).toBeGreaterThan(0);
    expect(failovers.map((f) => f.to)).toEqual([b.url]);
    expect(tookMs).toBeLessThan(MOVES_ON_WITHIN_MS);
  }, 60_000);

  it('holds it back only briefly: once it serves again, the next failover may use it', async () => {
    const { a, b, silent, failovers, sender } = await brokersAroundASilentMember('q-silent-back');
    await a.stop();
    expect((await sender.send({ body: 'on b' }, { timeoutMs: 30_000 })).state).toBe('accepted');
    expect(silent.accepted()).toBeGreaterThan(0);
    // the silent member runs again (a broker on its port); then b goes too: a is gone for good,
    // so the next accepted send needs the member suspected a moment ago
    await silent.close();
    const back = await startBroker({ host: '127.0.0.1', port: silent.port });
    cleanups.push(() => back.stop());
    await b.stop();
    const stoppedAt = performance.now();
    const r = await sender.send({ body: 'on the member that came back' }, { timeoutMs: 30_000 });
    const tookMs = performance.now() - stoppedAt;
    expect(r.state).toBe('accepted');
    expect(failovers.map((f) => f.to)).toEqual([b.url, back.url]);
    // the old hold was the idle timeout, 10 s
    expect(tookMs).toBeLessThan(MOVES_ON_WITHIN_MS);
  }, 60_000);
});
