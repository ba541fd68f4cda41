/**
 * Failover against rhea peers that we stop, kill and start (test/client/rhea-peer.ts): unsettled
 * sends re-sent in order with the same message-id, links re-attached under the same names and
 * container-id, credit restored (prefetch and manual), dedup of redelivered ids, the offline
 * buffer's bound (wait vs reject), deadlines while disconnected (inDoubt set right), idle-timeout
 * detection of a silent member, membership from Open and from the feed, a not-quorate Close, and
 * every pending operation failing clearly when reconnect limits run out.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LinkProxy } from '../../../src/cluster-broker/netproxy/index.js';
import { encodeMessage } from '../../../src/codec/public.js';
import {
  type Connection,
  type ConnectionEvents,
  type ConnectOptions,
  connect,
  type Delivery,
  type SendResult,
} from '../../../src/index.js';
import { type RheaPeer, type RheaPeerOptions, startRheaPeer, stored } from '../../client/rhea-peer.js';
import { freePort, waitFor } from '../../support/net.js';

const peers: RheaPeer[] = [];
const conns: Connection[] = [];
const proxies: LinkProxy[] = [];

async function peer(opts: RheaPeerOptions = {}): Promise<RheaPeer> {
  const p = await startRheaPeer(opts);
  peers.push(p);
  return p;
}

async function client(urls: string[], extra: Partial<ConnectOptions> = {}): Promise<Connection> {
  const c = await connect({
    urls,
    randomizeMembers: false,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 20_000 },
    ...extra,
  });
  conns.push(c);
  return c;
}

/** Records every connection event, in order. */
function record(conn: Connection) {
  const events: { name: keyof ConnectionEvents; info: unknown }[] = [];
  const names: (keyof ConnectionEvents)[] = [
    'connected',
    'disconnected',
    'reconnecting',
    'failover',
    'membership',
    'inDoubt',
    'closed',
  ];
  for (const name of names) conn.on(name, (info: unknown) => events.push({ name, info }));
  return {
    events,
    of: <K extends keyof ConnectionEvents>(name: K) =>
      events.filter((e) => e.name === name).map((e) => e.info as ConnectionEvents[K][0]),
  };
}

function once<K extends keyof ConnectionEvents>(conn: Connection, name: K): Promise<ConnectionEvents[K][0]> {
  return new Promise((resolve) =>
    conn.once(name, ((info: ConnectionEvents[K][0]) => resolve(info)) as never),
  );
}

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
  for (const p of peers.splice(0)) await p.stop().catch(() => undefined);
  for (const x of proxies.splice(0)) await x.close().catch(() => undefined);
});

describe('client failover (rhea peers)', () => {
  it('re-sends unsettled deliveries in order with the same message-ids on the next member', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const b = await peer();
    const conn = await client([a.url, b.url], { containerId: 'fo-1' });
    const rec = record(conn);
    const sender = await conn.openSender('orders');
    const pending: Promise<SendResult>[] = [];
    for (let i = 0; i < 5; i++) pending.push(sender.send({ body: i }));
    await waitFor(() => a.received.length === 5, {
      timeoutMs: 15_000,
      what: 'A to hold 5 messages',
      intervalMs: 10,
    });
    const idsOnA = a.received.map((r) => r.m.message.messageId);
    const failover = once(conn, 'failover');
    await a.stop();
    const f = await failover;
    const results = await Promise.all(pending);
    expect(results.every((r) => r.state === 'accepted' && r.resent)).toBe(true);
    expect(results.map((r) => r.messageId)).toEqual(idsOnA);
    // same order, same ids, same bytes
    expect(b.received.map((r) => r.m.message.messageId)).toEqual(idsOnA);
    expect(b.received.map((r) => r.m.bytes)).toEqual(a.received.map((r) => r.m.bytes));
    expect(f).toMatchObject({ from: a.url, to: b.url, resent: 5, reattached: 1 });
    expect(f.durationMs).toBeGreaterThanOrEqual(0);
    expect(rec.of('inDoubt').map((e) => e.messageId)).toEqual(idsOnA);
    expect(rec.of('inDoubt')[0]!.address).toBe('orders');
    expect(rec.of('disconnected')).toHaveLength(1);
    expect(rec.of('reconnecting')[0]).toMatchObject({ attempt: 1 });
    // the sender re-attached under the same name and container-id
    const attachA = a.attaches.find((x) => x.role === 'sender')!;
    const attachB = b.attaches.find((x) => x.role === 'sender')!;
    expect(attachB.name).toBe(attachA.name);
    expect(attachB.containerId).toBe('fo-1');
    expect(conn.stats().buffered.messages).toBe(0);
    // later sends go to B
    expect((await sender.send({ body: 'after' })).resent).toBe(false);
  });

  it('queued sends (never written) are written once after failover, after the in-doubt ones', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`]);
    const sender = await conn.openSender('q');
    const first = sender.send({ messageId: 'w1', body: 1 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    // while no member is up, these are buffered, never written
    const later = [sender.send({ messageId: 'q1', body: 2 }), sender.send({ messageId: 'q2', body: 3 })];
    await new Promise((r) => setTimeout(r, 100));
    const b = await peer({ port: bPort });
    const results = await Promise.all([first, ...later]);
    expect(results.map((r) => r.resent)).toEqual([true, false, false]);
    expect(b.received.map((r) => r.m.message.messageId)).toEqual(['w1', 'q1', 'q2']);
  });

  it('receivers re-attach with the same name; prefetch credit is restored', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('work', { credit: 5 });
    await waitFor(() => a.credit(receiver.name) === 5, {
      timeoutMs: 15_000,
      what: 'a.credit(receiver.name) === 5',
      intervalMs: 10,
    });
    const failover = once(conn, 'failover');
    a.killConnections();
    await a.stop();
    expect((await failover).reattached).toBe(1);
    await waitFor(() => b.attaches.some((x) => x.role === 'receiver'), {
      timeoutMs: 15_000,
      what: 'attach on B',
      intervalMs: 10,
    });
    const onB = b.attaches.find((x) => x.role === 'receiver')!;
    expect(onB.name).toBe(receiver.name);
    await waitFor(() => b.credit(receiver.name) === 5, {
      timeoutMs: 15_000,
      what: 'credit 5 on B',
      intervalMs: 10,
    });
    b.enqueue('work', stored({ body: 'hi' }, encodeMessage({ messageId: 'm1', body: 'hi' })));
    const d = await receiver.receive({ timeoutMs: 5000 });
    expect(d.message.body).toBe('hi');
    await d.accept();
  });

  it('manual credit: after failover the receiver re-grants what was granted minus what was handed out', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('manual', { credit: 0 });
    receiver.addCredit(3);
    a.enqueue('manual', stored({}, encodeMessage({ messageId: 'x1', body: 1 })));
    const d = await receiver.receive({ timeoutMs: 5000 });
    await d.accept();
    await waitFor(() => a.credit(receiver.name) === 2, {
      timeoutMs: 15_000,
      what: 'a.credit(receiver.name) === 2',
      intervalMs: 10,
    });
    const failover = once(conn, 'failover');
    await a.stop();
    await failover;
    await waitFor(() => b.credit(receiver.name) === 2, {
      timeoutMs: 15_000,
      what: 'credit 2 on B',
      intervalMs: 10,
    });
  });

  it('dedup: a redelivered accepted id is settled again, not handed out; an unsettled one binds', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('dd', { credit: 10 });
    const bytesX = encodeMessage({ messageId: 'x', body: 'x' });
    const bytesY = encodeMessage({ messageId: 'y', body: 'y' });
    a.enqueue('dd', stored({}, bytesX));
    a.enqueue('dd', stored({}, bytesY));
    const dx = await receiver.receive({ timeoutMs: 5000 });
    expect(dx.message.messageId).toBe('x');
    await dx.accept(); // confirmed on A
    const dy = await receiver.receive({ timeoutMs: 5000 });
    expect(dy.message.messageId).toBe('y'); // handed out, not settled yet
    // the broker failed over without the settlement of x (replica lag): both come again on B
    b.enqueue('dd', stored({}, bytesX));
    b.enqueue('dd', stored({}, bytesY));
    b.enqueue('dd', stored({}, encodeMessage({ messageId: 'z', body: 'z' })));
    const failover = once(conn, 'failover');
    await a.stop();
    await failover;
    const dz = await receiver.receive({ timeoutMs: 5000 });
    expect(dz.message.messageId).toBe('z'); // x suppressed, y bound to dy
    expect(receiver.duplicatesSuppressed).toBe(2);
    await dy.accept(); // settles the bound redelivery on B
    await dz.accept();
    await waitFor(() => b.queue('dd').length === 0, {
      timeoutMs: 15_000,
      what: 'B queue empty',
      intervalMs: 10,
    });
    await expect(receiver.receive({ timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });

  it('dedup holds for batch receives: across a failover no message-id is handed out twice', async () => {
    const a = await peer();
    const b = await peer();
    const conn = await client([a.url, b.url]);
    const receiver = await conn.openReceiver('ddb', { credit: 10 });
    const bytes = (id: string) => encodeMessage({ messageId: id, body: id });
    for (const id of ['x', 'y', 'w']) a.enqueue('ddb', stored({}, bytes(id)));
    await waitFor(() => receiver.buffered === 3, {
      timeoutMs: 15_000,
      what: 'x, y, w buffered',
      intervalMs: 10,
    });
    const first = await receiver.receive({ max: 10, timeoutMs: 5000 });
    expect(first.map((d) => d.message.messageId)).toEqual(['x', 'y', 'w']);
    const [dx, dy, dw] = first as [Delivery, Delivery, Delivery];
    await Promise.all([dx.accept(), dw.accept()]); // confirmed on A; y handed out, not settled
    // the broker failed over without those settlements (replica lag): all three come again on B
    for (const id of ['x', 'y', 'w', 'z']) b.enqueue('ddb', stored({}, bytes(id)));
    const failover = once(conn, 'failover');
    await a.stop();
    await failover;
    const after: string[] = [];
    const handedOut: Delivery[] = [];
    while (!after.includes('z')) {
      const batch = await receiver.receive({ max: 10, timeoutMs: 5000 });
      handedOut.push(...batch);
      after.push(...batch.map((d) => String(d.message.messageId)));
    }
    expect(after).toEqual(['z']); // x and w settled again, y bound to dy
    expect(receiver.duplicatesSuppressed).toBe(3);
    await dy.accept(); // settles the bound redelivery on B
    await Promise.all(handedOut.map((d) => d.accept()));
    await waitFor(() => b.queue('ddb').length === 0, {
      timeoutMs: 15_000,
      what: 'B queue empty',
      intervalMs: 10,
    });
    await expect(receiver.receive({ max: 10, timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
  });

  it('buffer bound while disconnected: send waits for room (onFull wait)', async () => {
    const a = await peer();
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`], { bufferLimit: { messages: 2 } });
    const sender = await conn.openSender('bq');
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    const p1 = sender.send({ body: 1 });
    const p2 = sender.send({ body: 2 });
    let third = false;
    const p3 = sender.send({ body: 3 }).then((r) => {
      third = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(third).toBe(false);
    expect(conn.stats().buffered.messages).toBe(2);
    expect(conn.stats().waiting).toBe(1);
    const b = await peer({ port: bPort });
    const rs = await Promise.all([p1, p2, p3]);
    expect(rs.map((r) => r.state)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(b.received.map((r) => r.m.message.body)).toEqual([1, 2, 3]);
  });

  it("buffer bound while disconnected: onFull 'reject' fails at once, not in doubt", async () => {
    const a = await peer();
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`], {
      bufferLimit: { messages: 2 },
      onFull: 'reject',
    });
    const sender = await conn.openSender('bq');
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    const p1 = sender.send({ body: 1 });
    const p2 = sender.send({ body: 2 });
    const err = await sender.send({ messageId: 'third', body: 3 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ condition: 'quorate:buffer-full', messageId: 'third', inDoubt: false });
    const b = await peer({ port: bPort });
    await Promise.all([p1, p2]);
    expect(b.received).toHaveLength(2);
  });

  it('deadlines while disconnected: a never-written send is not in doubt, a written one is; both leave the journal', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const bPort = await freePort();
    const conn = await client([a.url, `amqp://127.0.0.1:${bPort}`]);
    const sender = await conn.openSender('dl');
    const written = sender.send({ messageId: 'written', body: 1 }, { timeoutMs: 1500 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    const never = sender.send({ messageId: 'never', body: 2 }, { timeoutMs: 200 });
    await expect(never).rejects.toMatchObject({
      condition: 'quorate:timeout',
      messageId: 'never',
      inDoubt: false,
    });
    await expect(written).rejects.toMatchObject({
      condition: 'quorate:timeout',
      messageId: 'written',
      inDoubt: true,
    });
    expect(conn.stats().buffered.messages).toBe(0);
    // once a member is back, abandoned sends are not re-sent
    const b = await peer({ port: bPort });
    await once(conn, 'failover');
    await sender.send({ messageId: 'fresh', body: 3 });
    expect(b.received.map((r) => r.m.message.messageId)).toEqual(['fresh']);
  });

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

  it('close() while reconnecting stops at once; pending sends reject as closed', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const conn = await client([a.url]);
    const sender = await conn.openSender('c');
    const pending = sender.send({ messageId: 'c1', body: 1 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const disconnected = once(conn, 'disconnected');
    await a.stop();
    await disconnected;
    expect(conn.state).toBe('reconnecting');
    const started = Date.now();
    await conn.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(conn.state).toBe('closed');
    await expect(pending).rejects.toMatchObject({
      condition: 'quorate:closed',
      messageId: 'c1',
      inDoubt: true,
    });
  });

  it('when reconnect limits run out, every pending operation rejects with a clear error', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const conn = await client([a.url], { reconnect: { initialDelayMs: 20, maxDelayMs: 50, maxTimeMs: 600 } });
    const sender = await conn.openSender('gone');
    const receiver = await conn.openReceiver('gone');
    const pending = sender.send({ messageId: 'lost?', body: 1 });
    await waitFor(() => a.received.length === 1, {
      timeoutMs: 15_000,
      what: 'a.received.length === 1',
      intervalMs: 10,
    });
    const closed = once(conn, 'closed');
    const next = receiver.receive();
    await a.stop();
    const info = await closed;
    expect(info.error).toMatchObject({ condition: 'quorate:reconnect-exhausted' });
    await expect(pending).rejects.toMatchObject({
      condition: 'quorate:reconnect-exhausted',
      messageId: 'lost?',
      inDoubt: true,
    });
    await expect(next).rejects.toMatchObject({ condition: 'quorate:reconnect-exhausted' });
    await expect(sender.send({ body: 2 })).rejects.toMatchObject({ inDoubt: false });
    expect(conn.state).toBe('closed');
  });
});
