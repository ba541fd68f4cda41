/**
 * A member that accepts TCP connections but never says a byte (a stopped process: the kernel
 * still accepts into its backlog) must not cost a failover the whole attempt timeout
 * (docs/failover.md#silent-member). The client uses broker A; the next member in its list is a
 * plain TCP server that never writes, then broker B. A stops; the failover dials the silent member,
 * gives it up after its first-byte deadline (1 s by default), and the next send is accepted by B.
 *
 * No assertion on speed: the connection's attempt timeout and idle timeout are made so long
 * (LONG_WAIT_MS) that waiting either out cannot fit in the send's deadline (half of it), while the
 * first-byte deadline and the short hold (seconds) fit on any machine; and the attempt given up is
 * checked to have been given up by its first-byte deadline.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker } from '../../src/broker.js';
import { type ConnectionEvents, connect } from '../../src/index.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/**
 * The attempt timeout and the idle timeout of the connection, ms: what a dial to the silent member
 * would wait without its first-byte deadline, and what it was held back for before the short hold.
 */
const LONG_WAIT_MS = 240_000;
/** Each send's deadline: far under LONG_WAIT_MS, so it passes only if neither is waited out. */
const SEND_DEADLINE_MS = LONG_WAIT_MS / 4;
/** The test's own deadline: the send's, and room to close. */
const TEST_DEADLINE_MS = SEND_DEADLINE_MS + 30_000;

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

/**
 * Brokers a and b, the silent member between them in the list, a sender. Default options but the
 * attempt and idle timeouts (LONG_WAIT_MS) and the overall reconnect time (no limit before them).
 */
async function brokersAroundASilentMember(queue: string) {
  const a = await startBroker({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => a.stop());
  const b = await startBroker({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => b.stop());
  const silent = await silentServer();
  const conn = await connect({
    urls: [a.url, silent.url, b.url],
    randomizeMembers: false,
    idleTimeoutMs: LONG_WAIT_MS,
    reconnect: { attemptTimeoutMs: LONG_WAIT_MS, maxTimeMs: 2 * LONG_WAIT_MS },
  });
  cleanups.push(() => conn.close());
  const failovers: ConnectionEvents['failover'][0][] = [];
  conn.on('failover', (e) => failovers.push(e));
  // each attempt after the first failed one carries that failure: the silent member's tells how it ended
  const attemptErrors: { url: string; error: Error }[] = [];
  conn.on('reconnecting', (e) => {
    if (e.error) attemptErrors.push({ url: e.url, error: e.error });
  });
  return { a, b, silent, failovers, attemptErrors, sender: await conn.openSender(queue) };
}

describe('a failover past a member that accepts but never speaks', () => {
  it(
    'gives it up after its first-byte deadline, not the attempt timeout',
    async () => {
      const { a, b, silent, failovers, attemptErrors, sender } = await brokersAroundASilentMember('q-silent');
      expect((await sender.send({ body: 'before' })).state).toBe('accepted');

      await a.stop();
      // waiting out the attempt timeout on the silent member would miss this deadline
      const r = await sender.send({ body: 'after' }, { timeoutMs: SEND_DEADLINE_MS });

      expect(r.state).toBe('accepted');
      expect(silent.accepted()).toBeGreaterThan(0);
      expect(failovers.map((f) => f.to)).toEqual([b.url]);
      // the attempt on the silent member ended at its first-byte deadline, not at "no Open within"
      expect(attemptErrors.map((e) => e.error.message)).toContainEqual(
        expect.stringMatching(`127.0.0.1:${silent.port}: no answer to the AMQP header within`),
      );
    },
    TEST_DEADLINE_MS,
  );

  it(
    'holds it back only briefly: once it serves again, the next failover may use it',
    async () => {
      const { a, b, silent, failovers, sender } = await brokersAroundASilentMember('q-silent-back');
      await a.stop();
      expect((await sender.send({ body: 'on b' }, { timeoutMs: SEND_DEADLINE_MS })).state).toBe('accepted');
      expect(silent.accepted()).toBeGreaterThan(0);
      // the silent member runs again (a broker on its port); then b goes too: a is gone for good,
      // so the next accepted send needs the member suspected a moment ago
      await silent.close();
      const back = await startBroker({ host: '127.0.0.1', port: silent.port });
      cleanups.push(() => back.stop());
      await b.stop();
      // a hold as long as the idle timeout (what it was) would keep it out past this deadline
      const r = await sender.send({ body: 'on the member that came back' }, { timeoutMs: SEND_DEADLINE_MS });
      expect(r.state).toBe('accepted');
      expect(failovers.map((f) => f.to)).toEqual([b.url, back.url]);
    },
    TEST_DEADLINE_MS,
  );
});
