/**
 * Client failover against rhea peers, choosing members: idle-timeout detection of a silent member,
 * a not-quorate Close (at Open or later), and membership from Open and from the feed.
 */
import { describe, expect, it } from 'vitest';
import { LinkProxy } from '../../../src/cluster-broker/netproxy/index.js';
import { encodeMessage } from '../../../src/codec/public.js';
import { type ConnectionEvents, connect } from '../../../src/index.js';
import { stored } from '../../client/rhea-peer.js';
import { waitFor } from '../../support/net.js';
import { client, conns, once, peer, proxies, useFailoverCleanup } from './failover-peers.js';

useFailoverCleanup();

describe('client failover (rhea peers)', () => {
  it('a silent member is detected by the idle timeout and left', async () => {
    const a = await peer();
    const b = await peer();
    const proxy = new LinkProxy({ target: { host: '127.0.0.1', port: a.port } });
    proxies.push(proxy);
    const proxyPort = await proxy.listen();
    const conn = await client([`amqp://127.0.0.1:${proxyPort}`, b.url], { idleTimeoutMs: 600 });
    const sender = await conn.openSender('idle');
    await sender.send({ body: 'before' });
    const started = Date.now();
    const failover = once(conn, 'failover');
    proxy.cut('blackhole');
    const f = await failover;
    expect(f.to).toBe(b.url);
    expect(f.reason).toMatch(/idle/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await sender.send({ body: 'after' })).state).toBe('accepted');
  });

  it('a not-quorate Close moves to another member', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const sender = await conn.openSender('nq');
    const failover = once(conn, 'failover');
    for (const c of a.connections)
      c.close({ condition: 'amqp:connection:forced', description: 'not quorate' });
    const f = await failover;
    expect(f).toMatchObject({ from: a.url, to: b.url });
    expect(f.reason).toMatch(/not quorate/);
    expect((await sender.send({ body: 1 })).state).toBe('accepted');
  });

  it('connect(): a member that answers Open with a not-quorate Close is skipped, and tried last', async () => {
    const a = await peer({
      closeOnOpen: { condition: 'amqp:connection:forced', description: 'not quorate' },
    });
    const b = await peer();
    const reconnecting: string[] = [];
    const conn = await connect({
      urls: [a.url, b.url],
      randomizeMembers: false,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 20_000 },
    });
    conns.push(conn);
    conn.on('reconnecting', (e) => reconnecting.push(e.url));
    expect(conn.url).toBe(b.url);
    // b dies: a is held back (not quorate), so b is tried again first once it is back
    const bPort = b.port;
    await b.stop();
    await waitFor(() => reconnecting.length >= 1, {
      timeoutMs: 15_000,
      what: 'reconnecting',
      intervalMs: 10,
    });
    const b2 = await peer({ port: bPort });
    await once(conn, 'failover');
    expect(conn.url).toBe(b2.url);
    expect(reconnecting[0]).toBe(b.url);
  });

  it('learns members from Open failover-server-list and from the $cluster/membership feed', async () => {
    const b = await peer();
    const c = await peer();
    const a = await peer({
      openProperties: { 'failover-server-list': [{ 'network-host': '127.0.0.1', port: b.port }] },
      offeredCapabilities: ['quorate:membership'],
    });
    const events: ConnectionEvents['membership'][0][] = [];
    const conn = await connect({
      urls: a.url,
      randomizeMembers: false,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 20_000 },
    });
    conns.push(conn);
    conn.on('membership', (e) => events.push(e));
    // the Open's list was applied before connect() resolved: a and b are members
    expect(conn.members).toEqual(expect.arrayContaining([a.url, b.url]));
    await waitFor(() => a.attaches.some((x) => x.address === '$cluster/membership'), {
      timeoutMs: 15_000,
      what: 'membership receiver',
      intervalMs: 10,
    });
    const feed = [
      { 'network-host': '127.0.0.1', port: a.port },
      { 'network-host': '127.0.0.1', port: c.port },
    ];
    a.enqueue('$cluster/membership', stored({}, encodeMessage({ body: feed as never })));
    await waitFor(() => events.length > 0, { timeoutMs: 15_000, what: 'membership event', intervalMs: 10 });
    expect(events[0]!.added).toEqual([c.url]);
    expect(events[0]!.removed).toEqual([b.url]);
    // a dies: the client goes to c, which it only knows from the feed
    const failover = once(conn, 'failover');
    await a.stop();
    expect((await failover).to).toBe(c.url);
  });
});
