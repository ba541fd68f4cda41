/**
 * The monitoring port against strangers (docs/security.md#http-port): a foreign `Host` is refused
 * (DNS rebinding), wrong basic-auth passwords are answered after a per-address delay even for a
 * user who has logged in before, half-sent requests beyond the connection cap are closed at once
 * (and those within it at the header deadline).
 */
import { createConnection } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, hashPassword, startBroker } from '../../../src/broker.js';
import { parseUsers } from '../../../src/cluster-broker/server/users.js';

const BASE_DELAY_MS = 60;
const CAP = 8;
const AUTH = `Basic ${Buffer.from('alice:s3cret').toString('base64')}`;

let broker: BrokerHandle;
let port = 0;

beforeAll(async () => {
  broker = await startBroker({
    users: parseUsers(`alice:${await hashPassword('s3cret')}\n`),
    anonymous: false,
    httpPort: 0,
    httpAllowedHosts: ['Status.Example.Internal'],
    httpLimits: { maxConnections: CAP, headersTimeoutMs: 1_000 },
    authThrottle: { baseDelayMs: BASE_DELAY_MS, halfLifeMs: 600_000 },
  });
  port = Number(new URL(broker.httpUrl!).port);
});

afterAll(async () => {
  await broker?.stop();
});

/** A raw HTTP/1.1 GET with a chosen Host (fetch does not let a page set it either). */
function rawGet(path: string, host: string, auth = AUTH): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${auth}\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    s.on('data', (d) => {
      text += d.toString('latin1');
    });
    s.on('error', reject);
    s.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
  });
}

describe('Host check', () => {
  it('refuses a foreign name with 421; serves loopback names, IPs and the allowed names', async () => {
    expect(await rawGet('/api/overview', 'attacker.example')).toBe(421);
    expect(await rawGet('/metrics', `attacker.example:${port}`)).toBe(421);
    expect(await rawGet('/', 'localhost.attacker.example')).toBe(421);
    expect(await rawGet('/api/overview', `127.0.0.1:${port}`)).toBe(200);
    expect(await rawGet('/api/overview', `localhost:${port}`)).toBe(200);
    expect(await rawGet('/api/overview', `[::1]:${port}`)).toBe(200);
    expect(await rawGet('/api/overview', `status.example.internal:${port}`)).toBe(200);
    // probes answer whatever the name: they tell only up or ready
    expect(await rawGet('/healthz', 'attacker.example')).toBe(200);
  });
});

describe('basic auth', () => {
  it('wrong passwords after a good login are answered after a delay that doubles per address', async () => {
    expect(await rawGet('/api/overview', '127.0.0.1')).toBe(200); // alice's check is now remembered
    const took: number[] = [];
    for (let i = 0; i < 4; i++) {
      const wrong = `Basic ${Buffer.from(`alice:guess-${i}`).toString('base64')}`;
      const t0 = performance.now();
      expect(await rawGet('/api/overview', '127.0.0.1', wrong)).toBe(401);
      took.push(performance.now() - t0);
    }
    // lower bounds only (decay over a 10-minute half-life is negligible)
    for (let i = 0; i < 4; i++) expect(took[i]).toBeGreaterThanOrEqual(0.97 * BASE_DELAY_MS * 2 ** i);
    expect(await rawGet('/api/overview', '127.0.0.1')).toBe(200);
  });
});

describe('connection cap', () => {
  it('half-sent requests beyond the cap are closed at once, the rest at the header deadline', async () => {
    let closedCount = 0;
    const allClosed = new Promise<void>((resolve) => {
      for (let i = 0; i < CAP * 4; i++) {
        const s = createConnection({ host: '127.0.0.1', port });
        s.on('connect', () => s.write('GET /api/overview HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
        s.on('error', () => {});
        // read: a paused socket never sees the server's FIN, so it would never close
        s.resume();
        s.on('close', () => {
          if (++closedCount === CAP * 4) resolve();
        });
      }
    });
    // the server closes every socket by itself (no test deadline but vitest's)
    await allClosed;
    expect(await rawGet('/api/overview', '127.0.0.1')).toBe(200);
  });
});
