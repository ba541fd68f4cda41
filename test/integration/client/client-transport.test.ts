import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { PhysicalConnection } from '../../../src/client/physical.js';
import { connectPhysical } from '../../../src/client/transport.js';
import { encodeMessage } from '../../../src/codec/public.js';
import { parseServerUrl } from '../../../src/failover/index.js';
import { type Connection, type ConnectOptions, connect, type SendResult } from '../../../src/index.js';
import type { SocketPort } from '../../../src/protocol/index.js';
import { type RheaPeer, type RheaPeerOptions, startRheaPeer } from '../../client/rhea-peer.js';
import { waitFor } from '../../support/net.js';
import { useSelfSignedCert } from '../../support/tls.js';

const peers: RheaPeer[] = [];
const conns: Connection[] = [];
const pem = useSelfSignedCert();

async function peer(opts: RheaPeerOptions = {}): Promise<RheaPeer> {
  const p = await startRheaPeer(opts);
  peers.push(p);
  return p;
}

async function client(extra: ConnectOptions): Promise<Connection> {
  const c = await connect({ randomizeMembers: false, ...extra });
  conns.push(c);
  return c;
}

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
  for (const p of peers.splice(0)) await p.stop().catch(() => undefined);
});

/**
 * A raw connection to a fresh rhea peer with a sender attached and `credit` granted, its socket's
 * writes counted from now on (`original` puts the socket's own write back).
 */
async function countedSender(containerId: string, address: string, credit: number) {
  const p = await peer();
  const phys: PhysicalConnection = await connectPhysical({
    server: parseServerUrl(p.url),
    containerId,
    idleTimeoutMs: 0,
    maxFrameSize: 65536,
    timeoutMs: 5000,
  });
  phys.setHandler({ onEvent: () => undefined, onLost: () => undefined });
  const link = phys.engine.begin().attachSender({ name: 's', target: { address }, source: {} });
  phys.pump();
  await waitFor(() => link.state === 'attached' && link.credit >= credit, {
    timeoutMs: 10_000,
    what: 'credit',
    intervalMs: 10,
  });
  const socket = (phys.port as SocketPort).socket;
  const original = socket.write.bind(socket);
  const writes = { count: 0 };
  socket.write = ((...args: Parameters<typeof socket.write>) => {
    writes.count++;
    return original(...args);
  }) as typeof socket.write;
  return { p, phys, link, socket, original, writes };
}

/** The peer got bodies 0..n-1 in order; then the socket's own write is back and the connection closed. */
async function receivedInOrderThenClose(
  { p, phys, socket, original }: Awaited<ReturnType<typeof countedSender>>,
  n: number,
): Promise<void> {
  await waitFor(() => p.received.length === n, {
    timeoutMs: 10_000,
    what: `${n} messages at the peer`,
    intervalMs: 10,
  });
  expect(p.received.map((r) => r.m.message.body)).toEqual([...Array(n).keys()]);
  socket.write = original;
  phys.close();
  await waitFor(() => phys.isLost, { timeoutMs: 10_000, what: 'close', intervalMs: 10 });
}

describe('client transport', () => {
  it('coalesces every frame of a microtask batch into one socket write', async () => {
    const sender = await countedSender('coalesce', 'c', 50);
    const { phys, link, writes } = sender;
    for (let i = 0; i < 50; i++) {
      link.send(new Uint8Array([i]), encodeMessage({ body: i }));
      phys.pump();
    }
    expect(writes.count).toBe(0); // nothing written synchronously
    // the client writes once the microtask queue is drained ('drained' batching: engine-driver.ts),
    // which is before the event loop's next phase
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(writes.count).toBe(1);
    await receivedInOrderThenClose(sender, 50);
  });

  it('a read that filled its buffer holds the writes until the next read, at most to the turn end', async () => {
    const sender = await countedSender('read-hold', 'h', 20);
    const { phys, link, socket, writes } = sender;
    /** Writes so far, read in the check phase of this turn (queued before any hold's own end). */
    const writesAtTurnEnd = () => new Promise<number>((resolve) => setImmediate(() => resolve(writes.count)));
    const sendTen = (from: number) => {
      for (let i = from; i < from + 10; i++) link.send(new Uint8Array([i]), encodeMessage({ body: i }));
      phys.pump();
    };
    // a read that filled its slab (slab-reads.ts says so with its second argument): the output
    // made after it is not written when the microtasks drain but at the end of the turn
    let seen = writesAtTurnEnd();
    socket.emit('data', new Uint8Array(0), true);
    sendTen(0);
    expect(await seen).toBe(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(writes.count).toBe(1);
    // the next read, not filled, ends the hold: one write for both reads' output, at once
    seen = writesAtTurnEnd();
    socket.emit('data', new Uint8Array(0), true);
    sendTen(10);
    socket.emit('data', new Uint8Array(0), false);
    expect(await seen).toBe(2);
    await receivedInOrderThenClose(sender, 20);
  });

  it('amqps:// with a CA works; an untrusted certificate does not', async () => {
    const p = await peer({ tls: { key: pem.key, cert: pem.cert } });
    const url = `amqps://localhost:${p.port}`;
    const conn = await client({ urls: url, tls: { ca: pem.cert } });
    const sender = await conn.openSender('tls-q');
    expect((await sender.send({ body: 'secure' })).state).toBe('accepted');
    const receiver = await conn.openReceiver('tls-q');
    const d = await receiver.receive({ timeoutMs: 5000 });
    expect(d.message.body).toBe('secure');
    await d.accept();
    // an untrusted certificate is permanent: connect() fails at once with the TLS error as cause
    const err = await connect({ urls: url, reconnect: { maxTimeMs: 20_000 } }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      condition: 'quorate:connect-failed',
      cause: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' },
    });
  });

  it('SASL PLAIN with credentials in the URL or in options; a wrong password fails fast', async () => {
    const p = await peer({ plainUsers: { alice: 's3cret', bob: 'pw' } });
    const c1 = await client({ urls: `amqp://alice:s3cret@127.0.0.1:${p.port}` });
    await c1.openSender('x');
    const c2 = await client({ urls: `amqp://127.0.0.1:${p.port}`, username: 'bob', password: 'pw' });
    await c2.openSender('x');
    expect(p.users).toEqual(['alice', 'bob']);
    const started = Date.now();
    const err = await connect({
      urls: `amqp://alice:wrong@127.0.0.1:${p.port}`,
      reconnect: { maxTimeMs: 20_000 },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ condition: 'amqp:unauthorized-access' });
    expect(Date.now() - started).toBeLessThan(3_000);
    // no credentials: ANONYMOUS, which this peer does not offer
    await expect(connect({ urls: p.url, reconnect: { maxTimeMs: 20_000 } })).rejects.toMatchObject({
      condition: 'amqp:unauthorized-access',
    });
  });

  it('the idle timeout does not trip on a healthy, quiet peer (heartbeats)', async () => {
    const p = await peer({ idleTimeoutMs: 400 });
    const conn = await client({ urls: p.url, idleTimeoutMs: 400 });
    let disconnected = false;
    conn.on('disconnected', () => {
      disconnected = true;
    });
    // nothing to wait for: the connection must stay up for several idle timeouts of quiet
    await new Promise((r) => setTimeout(r, 1_500));
    expect(disconnected).toBe(false);
    expect(conn.state).toBe('open');
  });

  it('a member that speaks garbage is left for the next one', async () => {
    const junk = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.resume(); // read, so the client's FIN is seen and the socket closes
      socket.end(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n'));
    });
    await new Promise<void>((resolve) => junk.listen(0, '127.0.0.1', resolve));
    const junkPort = (junk.address() as AddressInfo).port;
    try {
      const good = await peer();
      const conn = await client({
        urls: [`amqp://127.0.0.1:${junkPort}`, good.url],
        reconnect: { initialDelayMs: 20, maxDelayMs: 100, maxTimeMs: 10_000 },
      });
      expect(conn.url).toBe(good.url);
    } finally {
      await new Promise((r) => junk.close(r));
    }
  });

  it('connect() honours timeoutMs and an AbortSignal against a member that never answers', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.resume(); // accept and read, never answer
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `amqp://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      let started = Date.now();
      await expect(connect({ urls: url, timeoutMs: 300 })).rejects.toMatchObject({
        condition: 'quorate:timeout',
      });
      expect(Date.now() - started).toBeLessThan(3_000);
      const ac = new AbortController();
      started = Date.now();
      const pending = connect({ urls: url, signal: ac.signal });
      setTimeout(() => ac.abort(), 200);
      await expect(pending).rejects.toMatchObject({ condition: 'quorate:aborted' });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('a forced link detach fails the connection over and replays in-doubt sends', async () => {
    const a = await peer({ outcome: () => 'hold' });
    const b = await peer();
    const conn = await client({
      urls: [a.url, b.url],
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxTimeMs: 20_000 },
    });
    const sender = await conn.openSender('forced');
    const pending: Promise<SendResult>[] = [sender.send({ messageId: 'f1', body: 1 })];
    await waitFor(() => a.received.length === 1, { timeoutMs: 10_000, what: 'held on A', intervalMs: 10 });
    const failover = new Promise((resolve) => conn.once('failover', resolve));
    a.detachClientSenders({ condition: 'amqp:link:detach-forced', description: 'test' });
    await failover;
    pending.push(sender.send({ messageId: 'f2', body: 2 }));
    const rs = await Promise.all(pending);
    expect(rs.map((r) => [r.messageId, r.state, r.resent])).toEqual([
      ['f1', 'accepted', true],
      ['f2', 'accepted', false],
    ]);
    expect(b.received.map((r) => r.m.message.messageId)).toEqual(['f1', 'f2']);
  });
});
