/**
 * The monitoring port's deadlines (docs/security.md#http-port): a request whose headers do not
 * arrive in time is answered 408 and closed, even when its sender keeps dribbling header lines;
 * a socket that sends nothing is closed after the idle deadline; bad limits are refused with a
 * typed error.
 *
 * The clients here read what they receive (`resume`): a paused socket never sees the server's
 * FIN, so its 'close' would never come even though the server closed it.
 */
import { createConnection } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, MonitoringError, startBroker } from '../../../src/broker.js';
import { DEFAULT_HTTP_LIMITS, resolveHttpLimits } from '../../../src/cluster-broker/http/http-limits.js';

const HEADERS_DEADLINE_MS = 1_000;
/** Longer than any test here may take: a close can only come from the deadline under test. */
const NEVER_MS = 600_000;

interface Closed {
  /** What the server sent before it closed. */
  text: string;
  /** From connect to close. */
  afterMs: number;
}

/** Connects to `port`, runs `talk` once connected, and resolves when the server has closed the socket. */
function untilClosed(port: number, talk: (write: (s: string) => void) => () => void): Promise<Closed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let stopTalking = (): void => {};
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      stopTalking = talk((chunk) => {
        if (s.writable) s.write(chunk);
      });
    });
    let text = '';
    s.on('data', (d) => {
      text += d.toString('latin1');
    });
    s.on('error', reject);
    s.on('close', () => {
      stopTalking();
      resolve({ text, afterMs: performance.now() - t0 });
    });
  });
}

describe('header deadline', () => {
  let broker: BrokerHandle;
  let port = 0;

  beforeAll(async () => {
    broker = await startBroker({
      httpPort: 0,
      httpLimits: {
        headersTimeoutMs: HEADERS_DEADLINE_MS,
        requestTimeoutMs: NEVER_MS,
        idleTimeoutMs: NEVER_MS,
      },
    });
    port = Number(new URL(broker.httpUrl!).port);
  });

  afterAll(async () => {
    await broker?.stop();
  });

  // node checks the deadlines on a timer (connectionsCheckingInterval, 30 s by default): the test's
  // own deadline (15 s) fails it if that timer is left at its default
  it('a half-sent request is answered 408 and closed', async () => {
    const closed = await untilClosed(port, (write) => {
      write('GET /api/overview HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      return () => {};
    });
    expect(closed.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(closed.afterMs).toBeGreaterThanOrEqual(HEADERS_DEADLINE_MS * 0.95);
  }, 15_000);

  it('a sender dribbling header lines is cut off at the deadline too', async () => {
    const closed = await untilClosed(port, (write) => {
      write('GET /api/overview HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const dribble = setInterval(() => write('X-Slow: 1\r\n'), HEADERS_DEADLINE_MS / 5);
      return () => clearInterval(dribble);
    });
    expect(closed.text).toMatch(/^HTTP\/1\.1 408 /);
  }, 15_000);

  it('the port still serves', async () => {
    const res = await fetch(`${broker.httpUrl}/healthz`);
    expect(res.status).toBe(200);
  });
});

describe('idle deadline', () => {
  it('a socket that sends nothing is closed', async () => {
    const idleMs = 1_000;
    const broker = await startBroker({
      httpPort: 0,
      httpLimits: { headersTimeoutMs: NEVER_MS, requestTimeoutMs: NEVER_MS, idleTimeoutMs: idleMs },
    });
    try {
      const closed = await untilClosed(Number(new URL(broker.httpUrl!).port), () => () => {});
      expect(closed.text).toBe('');
      expect(closed.afterMs).toBeGreaterThanOrEqual(idleMs * 0.95);
    } finally {
      await broker.stop();
    }
  }, 15_000);
});

describe('limits', () => {
  it('a header deadline beyond the default request deadline raises the request deadline', async () => {
    const headersTimeoutMs = DEFAULT_HTTP_LIMITS.requestTimeoutMs * 2;
    expect(resolveHttpLimits({ headersTimeoutMs })).toEqual({
      ...DEFAULT_HTTP_LIMITS,
      headersTimeoutMs,
      requestTimeoutMs: headersTimeoutMs,
    });
    // node's createServer itself throws a RangeError for headersTimeout > requestTimeout
    const broker = await startBroker({ httpPort: 0, httpLimits: { headersTimeoutMs } });
    await broker.stop();
  });

  it('refuses limits that cannot work with MonitoringError', () => {
    for (const bad of [
      { maxConnections: 0 },
      { headersTimeoutMs: -1 },
      { idleTimeoutMs: 1.5 },
      { headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 },
    ]) {
      expect(() => resolveHttpLimits(bad)).toThrow(MonitoringError);
    }
  });
});
