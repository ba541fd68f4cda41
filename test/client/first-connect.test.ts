/**
 * The first connect() fails fast when nobody is there (docs/failover.md#first-connect): every
 * configured member refused or closed before the handshake on the first pass, nothing ever
 * connected: one error naming each member's cause, not a minute of silent retries. A plain URL on
 * a TLS port and a TLS URL on a plain port say which scheme to use. `waitOnFirstConnect` keeps
 * waiting for brokers started after their clients.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startBroker } from '../../src/broker.js';
import { ClientError, connect } from '../../src/index.js';
import { freePort } from '../support/net.js';
import { useSelfSignedCert } from '../support/tls.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const pem = useSelfSignedCert();

async function failure(run: Promise<unknown>): Promise<{ error: ClientError; ms: number }> {
  const started = performance.now();
  const error = await run.then(
    () => {
      throw new Error('connect() resolved');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientError);
  return { error: error as ClientError, ms: performance.now() - started };
}

describe('the first connect()', () => {
  it('every member refusing: rejects after one pass with each member and its cause', async () => {
    const ports = [await freePort(), await freePort(), await freePort()];
    const urls = ports.map((p) => `amqp://127.0.0.1:${p}`);
    // the default reconnect budget is 60 s: the answer must come long before it
    const { error, ms } = await failure(connect({ urls }));
    expect(error.condition).toBe('quorate:connect-failed');
    for (const u of urls) expect(error.message).toContain(`${u}: quorate:connect-failed`);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('waitOnFirstConnect: true');
    expect((error.info as { members: string[] }).members).toHaveLength(3);
    expect(ms).toBeLessThan(30_000);
  });

  it('waitOnFirstConnect keeps trying until a broker starts there', async () => {
    const port = await freePort();
    let attempts = 0;
    let started: Promise<void> | undefined;
    const conn = await connect({
      urls: `amqp://127.0.0.1:${port}`,
      waitOnFirstConnect: true,
      reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
      // the broker starts once the client has been refused three times
      logger: {
        info: (_obj: unknown, msg?: string) => {
          if (!msg?.startsWith('connection attempt')) return;
          attempts++;
          if (attempts === 3)
            started = startBroker({ port }).then((broker) => {
              cleanups.push(() => broker.stop());
            });
        },
      },
    });
    cleanups.unshift(() => conn.close());
    await started;
    expect(conn.state).toBe('open');
    expect(attempts).toBeGreaterThanOrEqual(3);
  });

  it('amqp:// to a TLS port says to use amqps://', async () => {
    const broker = await startBroker({ port: 0, tls: { key: pem.key, cert: pem.cert } });
    cleanups.push(() => broker.stop());
    const { error, ms } = await failure(connect({ urls: `amqp://127.0.0.1:${broker.port}` }));
    expect(error.message).toContain('if this port serves TLS, use amqps://');
    expect(ms).toBeLessThan(30_000);
  });

  it('amqps:// to a plain port says it does not speak TLS, at once', async () => {
    const broker = await startBroker({ port: 0 });
    cleanups.push(() => broker.stop());
    const { error, ms } = await failure(
      connect({ urls: `amqps://127.0.0.1:${broker.port}`, tls: { rejectUnauthorized: false } }),
    );
    expect(error.message).toContain('this port does not speak TLS: use amqp://');
    expect(ms).toBeLessThan(30_000);
  });
});
