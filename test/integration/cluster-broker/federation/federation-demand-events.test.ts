/**
 * A queue link hears of freed local demand at once (docs/federation.md#demand): with its credit
 * poll far beyond the test's deadlines, only the local broker's word that a consumer's credit
 * grew can make it move anything.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  Federation,
  localQueuesOf,
  resolveFederationConfig,
} from '../../../../src/cluster-broker/federation/index.js';
import { inProcessBrokers, sendIds } from '../../../support/federation.js';
import { waitFor } from '../../../support/net.js';

const { broker, client } = inProcessBrokers();

/** A poll that never fires within a test. */
const NEVER_MS = 3_600_000;

let federation: Federation | undefined;
afterEach(async () => {
  await federation?.stop();
  federation = undefined;
});

describe('queue link demand events', () => {
  it('moves a message as soon as a local consumer grants credit, without waiting for its poll', async () => {
    const a = await broker('A');
    await sendIds(a.url, 'orders', ['m0', 'm1', 'm2']);
    const b = await broker('B');
    const consumer = await (await client(b.url)).openReceiver('orders', { credit: 0 });
    federation = new Federation({
      upstreams: await resolveFederationConfig({
        upstreams: [{ name: 'up', urls: [a.url], queues: ['orders'], reconnectDelayMs: 100 }],
      }),
      local: localQueuesOf(b.server, b.backend, 'B'),
      logger: {},
      pollMs: NEVER_MS,
    });
    await federation.setActive(true);
    const link = federation;
    await waitFor(() => link.state()[0]?.state === 'running', { timeoutMs: 20_000, what: 'link running' });
    // nothing asked for yet: the link's first read of the demand granted nothing
    expect(link.state()[0]!.moved).toBe(0);
    // each grant of the consumer's frees demand here; the next message moves well before any poll
    for (const grant of [1, 2]) {
      consumer.addCredit(grant);
      for (let i = 0; i < grant; i++) await (await consumer.receive({ timeoutMs: 20_000 })).accept();
    }
    await waitFor(() => link.state()[0]!.moved === 3, { timeoutMs: 20_000, what: '3 moved' });
  });
});
