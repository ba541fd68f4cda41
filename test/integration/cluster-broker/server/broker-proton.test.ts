/**
 * The Qpid Proton Python client (an independent AMQP 1.0 implementation) against our broker:
 * mixed bodies, message ids and application properties round-trip through a queue.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';

const run = promisify(execFile);
let broker: BrokerHandle;

beforeAll(async () => {
  broker = await startBroker({ port: 0 });
});
afterAll(async () => {
  await broker.stop();
});

interface ProtonResult {
  sent: number;
  received: Array<{ id: string; body: unknown; props: Record<string, unknown> }>;
}

function expectedBody(i: number): unknown {
  switch (i % 5) {
    case 0:
      return `text-${i}`;
    case 1:
      return { binary: `bin-${i}` };
    case 2:
      return { n: i, s: `map-${i}` };
    case 3:
      return ['list', i];
    default:
      return i;
  }
}

describe('Qpid Proton client', () => {
  it('sends and receives mixed messages through the broker', async () => {
    const count = 50;
    const { stdout } = await run(
      '/usr/bin/python3',
      ['test/support/proton_client.py', broker.url, 'proton-q', String(count)],
      { timeout: 60_000 },
    );
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as ProtonResult;
    expect(result.sent).toBe(count);
    expect(result.received.map((r) => r.id)).toEqual(Array.from({ length: count }, (_, i) => `proton-${i}`));
    result.received.forEach((r, i) => {
      expect(r.body).toEqual(expectedBody(i));
      expect(r.props).toEqual({ i });
    });
    expect(broker.stats().queues.find((q) => q.name === 'proton-q')?.depth).toBe(0);
  });
});
