/**
 * A connection that will not reconnect keeps the idle timeout while its broker is slow
 * (docs/failover.md#unresponsive): the suspicion from silence is there to move to another member
 * early, and with `reconnect: false` it would only end the connection. A proxy holds the broker's
 * answers (a broker too busy to answer) for well past the suspicion's bound, then lets them go:
 * the send outstanding meanwhile is accepted, and the connection is still open. With reconnect on
 * (the default) the same hold ends in a failover.
 */
import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { startBroker } from '../../src/broker.js';
import { type Connection, connect } from '../../src/index.js';
import { LoopbackProxy } from '../support/loopback-proxy.js';

/** Well past the suspicion's bound with the default 250 ms (silence, then a probe deadline). */
const HOLD_MS = 2_000;

/** Forwards both ways; `hold()` stops passing the broker's bytes to the client until `release()`. */
class HoldingProxy extends LoopbackProxy {
  private readonly upstreams = new Set<net.Socket>();
  hold(): void {
    for (const u of this.upstreams) u.pause();
  }
  release(): void {
    for (const u of this.upstreams) u.resume();
  }
  protected accept(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    this.upstreams.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.upstreams.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  }
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function heldSend(reconnect: boolean): Promise<{ outcome: string; conn: Connection }> {
  const broker = await startBroker({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => broker.stop());
  const proxy = new HoldingProxy({ host: '127.0.0.1', port: broker.port });
  const port = await proxy.listen();
  cleanups.push(() => proxy.close());
  const conn = await connect({
    urls: `amqp://127.0.0.1:${port}`,
    ...(reconnect ? {} : { reconnect: false as const }),
  });
  cleanups.push(() => conn.close());
  const sender = await conn.openSender('held');
  expect((await sender.send({ body: 'warm' })).state).toBe('accepted');
  let ended: string | undefined;
  conn.on('failover', () => {
    ended ??= 'failover';
  });
  conn.on('error', () => {
    ended ??= 'error';
  });
  proxy.hold();
  const sent = sender.send({ body: 'held' }, { timeoutMs: 30_000 }).then(
    (r) => r.state,
    (err: unknown) => `rejected: ${(err as Error).message}`,
  );
  // the absence of a verdict is only known at a deadline: HOLD_MS, or the first verdict
  await Promise.race([
    new Promise((resolve) => setTimeout(resolve, HOLD_MS)),
    sent,
    new Promise<void>((resolve) => {
      conn.once('failover', () => resolve());
    }),
  ]);
  proxy.release();
  return { outcome: ended ?? (await sent), conn };
}

it('reconnect: false — a broker that holds its answers for 2 s does not end the connection', async () => {
  const { outcome, conn } = await heldSend(false);
  expect(outcome).toBe('accepted');
  expect(conn.state).toBe('open');
});

it('reconnect on — the same hold is a failover (the suspicion is on by default)', async () => {
  const { outcome } = await heldSend(true);
  expect(outcome).toBe('failover');
});
