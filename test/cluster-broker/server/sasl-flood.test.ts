/**
 * A SASL flood as an attacker sends it (docs/security.md#authentication): hundreds of sockets
 * from many loopback addresses each send a PLAIN sasl-init for an unknown user and hang up at
 * once. Their checks must neither pile up nor run after they left: a good client's login right
 * after the flood opens within a generous bound (before the bound on the check queue, every
 * flood check ran first: ~50 ms of scrypt each, two at a time).
 */
import { createConnection } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, hashPassword, startBroker } from '../../../src/broker.js';
import { parseUsers } from '../../../src/cluster-broker/server/users.js';
import { encodeProtocolHeader, encodeSaslFrame } from '../../../src/codec/index.js';
import { connect } from '../../../src/index.js';
import { waitFor } from '../../support/net.js';

const FLOOD = 600;
const SOURCES = 50;
/** Generous on a busy machine; the unbounded queue took FLOOD / 2 * ~50 ms = ~15 s and more. */
const GOOD_LOGIN_WITHIN_MS = 5_000;

let broker: BrokerHandle;

beforeAll(async () => {
  broker = await startBroker({
    users: parseUsers(`alice:${await hashPassword('s3cret')}\n`),
    anonymous: false,
    // the flood's failures are delayed per address; keep the test's own timers short
    authThrottle: { baseDelayMs: 10, maxDelayMs: 50 },
  });
});

afterAll(async () => {
  await broker?.stop();
});

function plainInit(user: string, password: string): Uint8Array {
  return encodeSaslFrame({
    type: 'sasl-init',
    body: { mechanism: 'PLAIN', initialResponse: Buffer.from(`\0${user}\0${password}`) },
  });
}

/** One flooder: connects from `localAddress`, sends header + sasl-init, closes at once; resolves when closed. */
function floodOnce(localAddress: string, i: number): Promise<void> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port: broker.port, localAddress }, () => {
      s.write(Buffer.concat([encodeProtocolHeader(3), plainInit(`nobody-${i}`, 'guess')]), () => s.destroy());
    });
    s.on('error', () => resolve());
    s.on('close', () => resolve());
    s.resume();
  });
}

describe('SASL flood', () => {
  it('a good login right after a flood of unknown users who hang up opens promptly', async () => {
    const flood: Promise<void>[] = [];
    for (let i = 0; i < FLOOD; i++) flood.push(floodOnce(`127.0.0.${2 + (i % SOURCES)}`, i));
    await Promise.all(flood);
    // "after the flood" as the broker sees it: every flood connection accepted and closed
    await waitFor(
      () => {
        const st = broker.server.stats();
        return st.connectionsAccepted >= FLOOD && st.connections === 0;
      },
      { timeoutMs: 60_000, what: 'the broker to accept and close every flood connection' },
    );
    const t0 = performance.now();
    const conn = await connect({
      urls: [broker.url],
      username: 'alice',
      password: 's3cret',
      reconnect: false,
    });
    const took = performance.now() - t0;
    await conn.close();
    expect(took).toBeLessThan(GOOD_LOGIN_WITHIN_MS);
  });
});
