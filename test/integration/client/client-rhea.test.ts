/**
 * The client against a rhea peer acting as a tiny broker (test/client/rhea-peer.ts): connect,
 * send/receive, every outcome, credit (prefetch and manual), confirmed accept, deadlines and
 * aborts, a 5 MiB multi-frame message, refusals and close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ClientError,
  type Connection,
  connect,
  decodeMessage,
  type Message,
  SendError,
  type SendResult,
} from '../../../src/index.js';
import { type RheaPeer, startRheaPeer } from '../../client/rhea-peer.js';
import { waitFor } from '../../support/net.js';

const peers: RheaPeer[] = [];
const conns: Connection[] = [];

async function peer(opts: Parameters<typeof startRheaPeer>[0] = {}): Promise<RheaPeer> {
  const p = await startRheaPeer(opts);
  peers.push(p);
  return p;
}

async function client(url: string | string[], extra: Partial<Parameters<typeof connect>[0]> = {}) {
  const c = await connect({ urls: url, ...extra });
  conns.push(c);
  return c;
}

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close().catch(() => undefined);
  for (const p of peers.splice(0)) await p.stop();
});

describe('client against a rhea peer', () => {
  it('connects, sends with an assigned message-id, and receives what it sent', async () => {
    const p = await peer();
    const conn = await client(p.url, { containerId: 'client-a' });
    expect(conn.url).toBe(p.url);
    const sender = await conn.openSender('q1');
    const original: Message = { body: 'hello', applicationProperties: { n: 1 } };
    const r = await sender.send(original);
    expect(r.state).toBe('accepted');
    expect(typeof r.messageId).toBe('string');
    expect(r.resent).toBe(false);
    // the caller's object is never modified
    expect(original.messageId).toBeUndefined();
    expect(p.received[0]!.m.message.messageId).toBe(r.messageId);
    expect(p.attaches[0]!.containerId).toBe('client-a');

    const r2 = await sender.send({ messageId: 'mine-1', body: 'second' });
    expect(r2.messageId).toBe('mine-1');

    const receiver = await conn.openReceiver('q1');
    const got: Message[] = [];
    for await (const d of receiver) {
      got.push(d.message);
      await d.accept();
      if (got.length === 2) break;
    }
    expect(got.map((m) => m.body)).toEqual(['hello', 'second']);
    expect(got[0]!.messageId).toBe(r.messageId);
    expect(p.queue('q1')).toHaveLength(0);
  });

  it('resolves only an accepted send; rejected, released and modified reject with their outcome', async () => {
    const outcomes = ['accept', 'reject', 'release', 'modify'] as const;
    const p = await peer({ outcome: (m) => outcomes[Number(m.message.body)]! });
    const conn = await client(p.url);
    const sender = await conn.openSender('q');
    // one at a time: rhea 3.0.5 merges dispositions of different outcomes settled in one tick
    const results: (SendResult | SendError)[] = [];
    for (let i = 0; i < outcomes.length; i++)
      results.push(await sender.send({ body: i }).catch((e: SendError) => e));
    expect(results[0]).toMatchObject({ state: 'accepted' });
    for (const r of results.slice(1)) {
      expect(r).toBeInstanceOf(SendError);
      expect((r as SendError).condition).toBe('quorate:not-accepted');
      expect((r as SendError).inDoubt).toBe(false);
    }
    const [, rejected, released, modified] = results.map((r) => (r as SendError).outcome);
    expect(rejected?.state === 'rejected' && rejected.error?.condition).toBe('amqp:precondition-failed');
    expect(released).toEqual({ state: 'released' });
    expect(modified?.state === 'modified' && modified.deliveryFailed && modified.undeliverableHere).toBe(
      true,
    );
  });

  it('receiver outcomes: release requeues, reject drops, modify requeues', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const sender = await conn.openSender('q');
    await sender.send({ messageId: 'a', body: 'a' });
    const receiver = await conn.openReceiver('q', { credit: 1 });
    const d1 = await receiver.receive({ timeoutMs: 5000 });
    await d1.release();
    const d2 = await receiver.receive({ timeoutMs: 5000 });
    expect(d2.message.messageId).toBe('a');
    await d2.modify({ deliveryFailed: true });
    const d3 = await receiver.receive({ timeoutMs: 5000 });
    expect(d3.message.messageId).toBe('a');
    await d3.reject({ condition: 'app:bad', description: 'no' });
    await expect(receiver.receive({ timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
    expect(p.queue('q')).toHaveLength(0);
    await expect(d3.accept()).rejects.toBeInstanceOf(ClientError);
  });

  it('credit 0: nothing flows until addCredit(n), then exactly n', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const sender = await conn.openSender('q');
    for (let i = 0; i < 5; i++) await sender.send({ body: i });
    const receiver = await conn.openReceiver('q', { credit: 0 });
    await expect(receiver.receive({ timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
    expect(p.queue('q')).toHaveLength(5);
    receiver.addCredit(2);
    const a = await receiver.receive({ timeoutMs: 5000 });
    const b = await receiver.receive({ timeoutMs: 5000 });
    await a.accept();
    await b.accept();
    expect([a.message.body, b.message.body]).toEqual([0, 1]);
    await expect(receiver.receive({ timeoutMs: 300 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
    });
    expect(p.queue('q')).toHaveLength(3);
  });

  it('prefetch window: the broker sees credit topped up to the window', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const receiver = await conn.openReceiver('q', { credit: 7 });
    await waitFor(() => p.credit(receiver.name) === 7, {
      timeoutMs: 10_000,
      what: 'p.credit(receiver.name) === 7',
      intervalMs: 10,
    });
    const sender = await conn.openSender('q');
    for (let i = 0; i < 5; i++) await sender.send({ body: i });
    await waitFor(() => receiver.buffered === 5, {
      timeoutMs: 10_000,
      what: 'receiver.buffered === 5',
      intervalMs: 10,
    });
    // 5 buffered + 2 credit: no top-up before the application takes them
    expect(p.credit(receiver.name)).toBe(2);
    // top-ups are batched: one flow once credit + buffered fell below half the window (after the
    // 4th hand-out: 2 credit + 1 buffered < 3.5, so credit goes to 7 - 1 = 6)
    for (let i = 0; i < 5; i++) await (await receiver.receive()).accept();
    await waitFor(() => p.credit(receiver.name) === 6, {
      timeoutMs: 10_000,
      what: 'p.credit(receiver.name) === 6',
      intervalMs: 10,
    });
  });

  it('confirmed accept (rcv-settle-mode second) where the broker offers it, first where not', async () => {
    const p2 = await peer({ secondMode: true });
    const c2 = await client(p2.url);
    const r2 = await c2.openReceiver('q');
    expect(r2.settleMode).toBe('second');
    expect(r2.confirmedAccept).toBe(true);
    expect(p2.attaches.at(-1)!.rcvSettleMode).toBe(1);
    const s2 = await c2.openSender('q');
    await s2.send({ body: 'x' });
    const d = await r2.receive({ timeoutMs: 5000 });
    await d.accept();
    expect(p2.queue('q')).toHaveLength(0);

    const p1 = await peer({ secondMode: false });
    const c1 = await client(p1.url);
    const r1 = await c1.openReceiver('q');
    expect(r1.settleMode).toBe('first');
    expect(r1.confirmedAccept).toBe(false);
    const s1 = await c1.openSender('q');
    await s1.send({ body: 'y' });
    const d1 = await r1.receive({ timeoutMs: 5000 });
    await d1.accept();
    await waitFor(() => p1.queue('q').length === 0, {
      timeoutMs: 10_000,
      what: "p1.queue('q').length === 0",
      intervalMs: 10,
    });
  });

  it('send timeout: rejects with SendError carrying messageId and inDoubt, and leaves the journal', async () => {
    const p = await peer({ outcome: () => 'hold' });
    const conn = await client(p.url);
    const sender = await conn.openSender('q');
    const err = await sender
      .send({ messageId: 'held-1', body: 1 }, { timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendError);
    expect(err).toMatchObject({ condition: 'quorate:timeout', messageId: 'held-1', inDoubt: true });
    expect(conn.stats().buffered.messages).toBe(0);
  });

  it('abort: an already-aborted signal rejects at once, not in doubt', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const sender = await conn.openSender('q');
    const ac = new AbortController();
    ac.abort();
    const err = await sender.send({ body: 1 }, { signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toMatchObject({ condition: 'quorate:aborted', inDoubt: false });
    expect(typeof (err as SendError).messageId).toBe('string');
    expect(p.received).toHaveLength(0);
    // abort while held by the broker: in doubt
    const p2 = await peer({ outcome: () => 'hold' });
    const c2 = await client(p2.url);
    const s2 = await c2.openSender('q');
    const ac2 = new AbortController();
    const pending = s2.send({ body: 2 }, { signal: ac2.signal });
    await waitFor(() => p2.received.length === 1, {
      timeoutMs: 10_000,
      what: 'p2.received.length === 1',
      intervalMs: 10,
    });
    ac2.abort();
    await expect(pending).rejects.toMatchObject({ condition: 'quorate:aborted', inDoubt: true });
  });

  it('a 5 MiB message goes through in many frames, both ways', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const sender = await conn.openSender('big');
    const body = new Uint8Array(5 * 1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
    const r = await sender.send({ body });
    expect(r.state).toBe('accepted');
    expect(p.received[0]!.m.bytes.length).toBeGreaterThan(5 * 1024 * 1024);
    const receiver = await conn.openReceiver('big');
    const d = await receiver.receive({ timeoutMs: 20_000 });
    expect(d.message.body).toBeInstanceOf(Uint8Array);
    expect(Buffer.compare(Buffer.from(d.message.body as Uint8Array), Buffer.from(body))).toBe(0);
    await d.accept();
  });

  it('a refused attach rejects openSender/openReceiver with the broker error', async () => {
    const p = await peer({ refuse: (a) => a === 'nope' });
    const conn = await client(p.url);
    await expect(conn.openSender('nope', { timeoutMs: 5000 })).rejects.toMatchObject({
      condition: 'amqp:not-found',
    });
    await expect(conn.openReceiver('nope', { timeoutMs: 5000 })).rejects.toMatchObject({
      condition: 'amqp:not-found',
    });
    // the connection is still usable
    const s = await conn.openSender('fine');
    expect((await s.send({ body: 1 })).state).toBe('accepted');
  });

  it('connect fails with a clear error when nothing listens', async () => {
    const p = await peer();
    const url = p.url;
    await p.stop();
    peers.length = 0;
    // a first connect that finds nobody there fails after one pass (docs/failover.md#first-connect)
    const err = await connect({ urls: url, reconnect: { maxTimeMs: 500 } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ condition: 'quorate:connect-failed' });
    const waited = await connect({
      urls: url,
      waitOnFirstConnect: true,
      reconnect: { maxTimeMs: 500 },
    }).catch((e: unknown) => e);
    expect(waited).toMatchObject({ condition: 'quorate:reconnect-exhausted' });
  });

  it('close: sender and receiver detach, connection closes, later calls fail', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const sender = await conn.openSender('q');
    const receiver = await conn.openReceiver('q');
    await sender.close();
    await expect(sender.send({ body: 1 })).rejects.toMatchObject({ condition: 'quorate:closed' });
    const it = receiver[Symbol.asyncIterator]();
    const next = it.next();
    await receiver.close();
    expect(await next).toEqual({ done: true, value: undefined });
    await conn.close();
    expect(conn.state).toBe('closed');
    await expect(conn.openSender('q')).rejects.toBeInstanceOf(ClientError);
    await waitFor(() => p.connections.size === 0, {
      timeoutMs: 10_000,
      what: 'p.connections.size === 0',
      intervalMs: 10,
    });
  });

  it('presettled sender: resolves once written, the peer gets every message', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const sender = await conn.openSender('fire', { presettled: true });
    const rs = await Promise.all([1, 2, 3].map((i) => sender.send({ body: i })));
    expect(rs.map((r) => r.state)).toEqual(['accepted', 'accepted', 'accepted']);
    await waitFor(() => p.received.length === 3, {
      timeoutMs: 10_000,
      what: 'p.received.length === 3',
      intervalMs: 10,
    });
    expect(p.received.map((r) => r.m.message.body)).toEqual([1, 2, 3]);
    expect(conn.stats().buffered.messages).toBe(0);
  });

  it('message bytes on the wire decode to what was sent', async () => {
    const p = await peer();
    const conn = await client(p.url);
    const sender = await conn.openSender('q');
    await sender.send({ subject: 's', body: { k: 'v' } as never, messageAnnotations: { 'x-opt': 1 } });
    const m = decodeMessage(p.received[0]!.m.bytes);
    expect(m.subject).toBe('s');
  });
});
