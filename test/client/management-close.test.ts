/**
 * A management request that is still waiting for its reply when the connection closes rejects
 * with ClientError 'quorate:closed' (src/client/request-reply.ts, the management client's router),
 * and so does every request after it. The peer is rhea's (test/client/rhea-peer.ts): it attaches
 * the `/management` link pair but runs no management node, so no request is ever answered and
 * the one that is pending at the close cannot have been answered first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ClientError, connect } from '../../src/index.js';
import { MANAGEMENT_ADDRESS } from '../../src/wire-extensions.js';
import { waitFor } from '../support/net.js';
import { startRheaPeer } from './rhea-peer.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** The request's own deadline: far past the test's, so only the close can end it in time. */
const REQUEST_DEADLINE_MS = 600_000;

describe('management when its connection closes', () => {
  it('rejects the pending request and every later one with quorate:closed', async () => {
    const peer = await startRheaPeer();
    cleanups.push(() => peer.stop());
    const conn = await connect({ urls: peer.url, reconnect: false });
    cleanups.push(() => conn.close());
    const management = await conn.management();

    const pending = management.getQueue('q', { timeoutMs: REQUEST_DEADLINE_MS }).catch((e: unknown) => e);
    // the request is on the wire (the send is done): only its reply is awaited now
    await waitFor(() => peer.received.some((r) => r.address === MANAGEMENT_ADDRESS), {
      timeoutMs: 20_000,
      what: 'the management request at the peer',
    });
    await conn.close();

    const error = await pending;
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ condition: 'quorate:closed' });
    await expect(management.listQueues({ timeoutMs: REQUEST_DEADLINE_MS })).rejects.toMatchObject({
      condition: 'quorate:closed',
    });
  }, 60_000);
});
