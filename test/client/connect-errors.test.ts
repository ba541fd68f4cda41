/**
 * connect() failures: permanent causes fail at once with that cause, transient ones are retried
 * and each attempt is reported with its cause, `reconnect: false` is one attempt, a deadline error
 * carries the last attempt's error, and argument mistakes are TypeError / RangeError with a code.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type BrokerHandle, hashPassword, parseHash, startBroker } from '../../src/broker.js';
import { ClientError, connect, SendError } from '../../src/index.js';
import { freePort } from '../support/net.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** Messages published on `quorate:reconnecting` while `run` runs. */
async function reconnectingDuring<T>(
  run: () => Promise<T>,
): Promise<{ seen: unknown[]; result: T | unknown }> {
  const seen: unknown[] = [];
  const onMessage = (m: unknown) => seen.push(m);
  diagnosticsChannel.subscribe('quorate:reconnecting', onMessage);
  try {
    const result = await run().catch((e: unknown) => e);
    return { seen, result };
  } finally {
    diagnosticsChannel.unsubscribe('quorate:reconnecting', onMessage);
  }
}

describe('connect() errors', () => {
  it('a refused port with reconnect: false is one attempt, a connect-failed error with ECONNREFUSED as cause', async () => {
    const port = await freePort();
    const { seen, result } = await reconnectingDuring(() =>
      connect({ urls: `amqp://127.0.0.1:${port}`, reconnect: false }),
    );
    expect(result).toBeInstanceOf(ClientError);
    const err = result as ClientError;
    expect(err.condition).toBe('quorate:connect-failed');
    expect(err.condition).not.toBe('amqp:connection:forced');
    expect((err.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(err.message).toBe(`quorate:connect-failed: 127.0.0.1:${port}: connection refused (ECONNREFUSED)`);
    expect(seen).toEqual([]); // one attempt: nothing was retried
  });

  it('transient failures are retried as configured, each retry reported with the previous cause', async () => {
    const port = await freePort();
    const { seen, result } = await reconnectingDuring(() =>
      connect({
        urls: `amqp://127.0.0.1:${port}`,
        waitOnFirstConnect: true,
        reconnect: { maxAttempts: 3, initialDelayMs: 10, maxDelayMs: 20 },
      }),
    );
    const err = result as ClientError;
    expect(err.condition).toBe('quorate:reconnect-exhausted');
    expect(err.message).toMatch(/after 3 attempts/);
    expect((err.cause as ClientError).condition).toBe('quorate:connect-failed');
    expect(seen).toHaveLength(2);
    for (const [i, m] of (seen as { attempt: number; error: ClientError }[]).entries()) {
      expect(m.attempt).toBe(i + 2);
      expect(m.error.condition).toBe('quorate:connect-failed');
      expect((m.error.cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    }
  });

  it('a deadline error carries the last attempt error as cause', async () => {
    const port = await freePort();
    const err = (await connect({
      urls: `amqp://127.0.0.1:${port}`,
      timeoutMs: 600,
      waitOnFirstConnect: true,
      reconnect: { initialDelayMs: 20, maxDelayMs: 50 },
    }).catch((e: unknown) => e)) as ClientError;
    expect(err.condition).toBe('quorate:timeout');
    expect(err.cause).toBeInstanceOf(ClientError);
    expect((err.cause as ClientError).condition).toBe('quorate:connect-failed');
    expect(((err.cause as ClientError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('a host unknown to DNS fails at once, not after the reconnect limits', async () => {
    const { seen, result } = await reconnectingDuring(() =>
      connect({ urls: 'amqp://no-such-host.invalid:5672', reconnect: { maxTimeMs: 60_000 } }),
    );
    const err = result as ClientError;
    expect(err.condition).toBe('quorate:connect-failed');
    expect((err.cause as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
    expect(seen).toEqual([]);
  });

  it('a peer that is not AMQP (an HTTP server) fails at once with that cause', async () => {
    const http: Server = createServer((_req, res) => res.end('hello'));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => http.close(r)));
    const port = (http.address() as { port: number }).port;
    const { seen, result } = await reconnectingDuring(() =>
      connect({ urls: `amqp://127.0.0.1:${port}`, reconnect: { maxTimeMs: 60_000 } }),
    );
    const err = result as ClientError;
    expect(err.condition).toBe('quorate:connect-failed');
    expect(err.message).toMatch(/does not speak AMQP 1\.0/);
    expect(seen).toEqual([]);
  });

  it('with several members, a non-AMQP one is skipped; connect() fails once every member failed that way', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 2; i++) {
      const http: Server = createServer((_req, res) => res.end('hello'));
      await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
      cleanups.push(() => new Promise((r) => http.close(r)));
      ports.push((http.address() as { port: number }).port);
    }
    const { result } = await reconnectingDuring(() =>
      connect({
        urls: ports.map((p) => `amqp://127.0.0.1:${p}`),
        randomizeMembers: false,
        reconnect: { maxTimeMs: 60_000, initialDelayMs: 10 },
      }),
    );
    expect(result).toMatchObject({ condition: 'quorate:connect-failed' });
    expect((result as Error).message).toMatch(/does not speak AMQP/);
  });

  it('a SASL failure fails at once with amqp:unauthorized-access', async () => {
    const b: BrokerHandle = await startBroker({
      host: '127.0.0.1',
      port: 0,
      users: new Map([['alice', parseHash(await hashPassword('pw'))]]),
    });
    cleanups.push(() => b.stop());
    const { seen, result } = await reconnectingDuring(() =>
      connect({ urls: b.url, username: 'alice', password: 'wrong', reconnect: { maxTimeMs: 60_000 } }),
    );
    expect(result).toMatchObject({ condition: 'amqp:unauthorized-access' });
    expect(seen).toEqual([]);
  });

  it('argument mistakes are TypeError / RangeError with a code, saying what is missing', async () => {
    const bad = connect as unknown as (o?: unknown) => Promise<unknown>;
    await expect(bad()).rejects.toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: expect.stringMatching(/needs an options object with urls/),
    });
    await expect(bad({ url: 'amqp://x' })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG_TYPE',
      message: expect.stringMatching(/options\.urls must be/),
    });
    await expect(bad({ urls: 'http://x' })).rejects.toBeInstanceOf(TypeError);
    await expect(bad({ urls: 'http://x' })).rejects.toMatchObject({ code: 'ERR_INVALID_URL' });
    await expect(bad({ urls: 'amqp://x', timeoutMs: -1 })).rejects.toBeInstanceOf(RangeError);
    await expect(bad({ urls: 'amqp://x', reconnect: { maxAttempts: 1.5 } })).rejects.toMatchObject({
      code: 'ERR_OUT_OF_RANGE',
    });
    await expect(bad({ urls: 'amqp://x', onFull: 'drop' })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG_VALUE',
    });
    await expect(bad({ urls: 'amqp://x', dial: 'unix:/tmp/amqp.sock' })).rejects.toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_TYPE',
      message: expect.stringMatching(/options\.dial must be a function/),
    });
  });

  it('no error message repeats its condition prefix', async () => {
    const b = await startBroker({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => b.stop());
    const conn = await connect({ urls: b.url });
    const sender = await conn.openSender('q');
    await conn.close();
    const err = (await sender.send({ body: 1 }).catch((e: unknown) => e)) as SendError;
    expect(err).toBeInstanceOf(SendError);
    expect(err.condition).toBe('quorate:closed');
    expect(err.message.match(/quorate:closed/g)).toHaveLength(1);
  });
});
