/**
 * rhea 3.0.5 (an independent AMQP 1.0 client) against our single-node broker: bodies, large
 * multi-frame messages, the outcomes of docs/delivery-contract.md#outcomes, competing consumers, many links,
 * duplicate detection, TTL, queue limits, rcv-settle-mode second, link stealing.
 */
import rhea from 'rhea';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import {
  closeConnection,
  connect,
  type RheaConnection,
  type RheaMessage,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';
import { waitFor } from '../../../support/net.js';

let broker: BrokerHandle;
let conn: RheaConnection;
let queueNo = 0;
const fresh = (name: string) => `${name}-${++queueNo}`;

beforeAll(async () => {
  broker = await startBroker({ port: 0, queueDefaults: {} });
  conn = await connect({ port: broker.port });
});

afterAll(async () => {
  await closeConnection(conn);
  await broker.stop();
});

describe('rhea client against the broker', () => {
  it('round-trips mixed bodies, properties and annotations untouched', async () => {
    const q = fresh('bodies');
    const bodies: unknown[] = [
      'text',
      Buffer.from([0, 1, 2, 255]),
      { a: 1, b: 'two', c: [1, 2, 3] },
      [1, 'x', null, true],
      42,
      null,
      3.5,
    ];
    const messages = bodies.map((body, i) => ({
      body,
      message_id: `b-${i}`,
      subject: `s${i}`,
      application_properties: { i, tag: 'mixed' },
      message_annotations: { 'x-opt-test': `ann-${i}` },
      durable: true,
      priority: 7,
    }));
    const outcomes = await sendAll(conn, q, messages);
    expect(outcomes.map((o) => o.state)).toEqual(bodies.map(() => 'accepted'));
    const r = new TestReceiver(conn, q);
    const got = await r.next(bodies.length);
    for (let i = 0; i < bodies.length; i++) {
      const m = got[i]!.message;
      expect(m.message_id).toBe(`b-${i}`);
      expect(m.subject).toBe(`s${i}`);
      expect(m.application_properties).toEqual({ i, tag: 'mixed' });
      expect(m.message_annotations).toEqual({ 'x-opt-test': `ann-${i}` });
      expect(m.durable).toBe(true);
      expect(m.priority).toBe(7);
      expect(m.first_acquirer).toBe(true);
      expect(m.delivery_count ?? 0).toBe(0);
      const body = m.body as unknown;
      if (Buffer.isBuffer(bodies[i])) expect(Buffer.from(body as Buffer)).toEqual(bodies[i]);
      else expect(body).toEqual(bodies[i]);
      got[i]!.delivery.accept();
    }
    r.link.close();
  });

  it('carries 5 MiB messages over multiple frames', async () => {
    const q = fresh('large');
    const big = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 0xff;
    const outcomes = await sendAll(conn, q, [
      { body: rheaData(big), message_id: 'big-1' },
      { body: rheaData(big.subarray(1)), message_id: 'big-2' },
    ]);
    expect(outcomes.map((o) => o.state)).toEqual(['accepted', 'accepted']);
    const r = new TestReceiver(conn, q);
    const got = await r.next(2, 30_000);
    expect(Buffer.from(got[0]!.message.body.content as Buffer).equals(big)).toBe(true);
    expect(Buffer.from(got[1]!.message.body.content as Buffer).equals(big.subarray(1))).toBe(true);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('released: offered again with delivery-count unchanged, first-acquirer false', async () => {
    const q = fresh('release');
    await sendAll(conn, q, [{ body: 'r1', message_id: 'r1' }]);
    const r = new TestReceiver(conn, q);
    const [first] = await r.next(1);
    expect(first!.message.first_acquirer).toBe(true);
    first!.delivery.release();
    const [again] = await r.next(1);
    expect(again!.message.body).toBe('r1');
    expect(again!.message.delivery_count ?? 0).toBe(0);
    expect(again!.message.first_acquirer ?? false).toBe(false);
    again!.delivery.accept();
    r.link.close();
  });

  it('modified{deliveryFailed}: delivery-count + 1; settled without outcome: the default outcome', async () => {
    const q = fresh('modified');
    await sendAll(conn, q, [{ body: 'm1', message_id: 'm1' }]);
    const r = new TestReceiver(conn, q);
    const [a] = await r.next(1);
    a!.delivery.modified({ delivery_failed: true });
    const [b] = await r.next(1);
    expect(b!.message.delivery_count).toBe(1);
    // settle with no outcome: the source's default modified{delivery-failed} applies
    b!.delivery.update(true);
    const [c] = await r.next(1);
    expect(c!.message.delivery_count).toBe(2);
    c!.delivery.accept();
    r.link.close();
  });

  it('advertises the default outcome modified{delivery-failed} on sources', async () => {
    const q = fresh('default-outcome');
    const r = new TestReceiver(conn, q);
    await r.opened;
    const src = (r.link as unknown as { remote: { attach: { source: { default_outcome?: unknown } } } })
      .remote.attach.source;
    // rhea leaves the outcome undecoded: descriptor 0x27 (modified), fields [delivery-failed = true]
    const outcome = src.default_outcome as {
      descriptor: { value: number };
      value: Array<{ value: unknown }>;
    };
    expect(outcome.descriptor.value).toBe(0x27);
    expect(outcome.value[0]!.value).toBe(true);
    r.link.close();
  });

  it('modified{undeliverableHere} on a queue without a delivery limit: never again to that link, still to another', async () => {
    const q = fresh('undeliverable');
    await sendAll(conn, q, [{ body: 'u1', message_id: 'u1' }]);
    const r1 = new TestReceiver(conn, q);
    const [a] = await r1.next(1);
    a!.delivery.modified({ undeliverable_here: true });
    r1.link.add_credit(5);
    expect(await r1.drainFor(400)).toEqual([]);
    const r2 = new TestReceiver(conn, q);
    const [b] = await r2.next(1);
    expect(b!.message.body).toBe('u1');
    b!.delivery.accept();
    r1.link.close();
    r2.link.close();
  });

  it('rejected: moved to the dead-letter queue <queue>.dlq', async () => {
    const q = fresh('reject');
    await sendAll(conn, q, [{ body: 'x1', message_id: 'x1', application_properties: { k: 'v' } }]);
    const r = new TestReceiver(conn, q);
    const [a] = await r.next(1);
    a!.delivery.reject({ condition: 'app:bad', description: 'no thanks' });
    const dlq = new TestReceiver(conn, `${q}.dlq`);
    const [d] = await dlq.next(1);
    expect(d!.message.body).toBe('x1');
    expect(d!.message.message_id).toBe('x1');
    expect(d!.message.application_properties).toEqual({ k: 'v' });
    d!.delivery.accept();
    r.link.add_credit(1);
    expect(await r.drainFor(200)).toEqual([]);
    r.link.close();
    dlq.link.close();
  });

  it('competing consumers share a queue in FIFO order without overlap', async () => {
    const q = fresh('compete');
    const n = 200;
    await sendAll(
      conn,
      q,
      Array.from({ length: n }, (_, i) => ({ body: i, message_id: `c-${i}` })),
    );
    const r1 = new TestReceiver(conn, q);
    const r2 = new TestReceiver(conn, q);
    const seen: number[] = [];
    const take = async (r: TestReceiver) => {
      for (;;) {
        const batch = await r.next(10).catch(() => []);
        if (batch.length === 0) return;
        for (const g of batch) {
          seen.push(g.message.body as number);
          g.delivery.accept();
        }
        if (seen.length >= n) return;
      }
    };
    await Promise.race([
      Promise.all([take(r1), take(r2)]),
      waitFor(() => seen.length >= n, { timeoutMs: 20_000, what: 'seen.length >= n', intervalMs: 20 }),
    ]);
    expect(seen.length).toBe(n);
    expect(new Set(seen).size).toBe(n);
    r1.link.close();
    r2.link.close();
  });

  it('serves many links at once', async () => {
    const links = 40;
    const per = 25;
    const qs = Array.from({ length: links }, (_, i) => fresh(`many-${i}`));
    const sent = await Promise.all(
      qs.map((q) =>
        sendAll(
          conn,
          q,
          Array.from({ length: per }, (_, i) => ({ body: `${q}:${i}` })),
        ),
      ),
    );
    for (const s of sent) expect(s.every((o) => o.state === 'accepted')).toBe(true);
    const receivers = qs.map((q) => new TestReceiver(conn, q));
    const got = await Promise.all(receivers.map((r) => r.next(per)));
    got.forEach((batch, k) => {
      expect(batch.map((g) => g.message.body)).toEqual(
        Array.from({ length: per }, (_, i) => `${qs[k]}:${i}`),
      );
      for (const g of batch) g.delivery.accept();
    });
    for (const r of receivers) r.link.close();
  });

  it('a sender desiring quorate:dedup: a re-send of a message-id is accepted and not enqueued twice', async () => {
    const q = fresh('dedup');
    const dedup = { desired_capabilities: ['quorate:dedup'] };
    const first = await sendAll(
      conn,
      q,
      [{ body: 'd1', message_id: 'dup-1' }, { body: 'd2', message_id: 'dup-2' }, { body: 'n1' }],
      dedup,
    );
    expect(first.map((o) => o.state)).toEqual(['accepted', 'accepted', 'accepted']);
    const again = await sendAll(conn, q, [{ body: 'd1 again', message_id: 'dup-1' }, { body: 'n1' }], dedup);
    expect(again.map((o) => o.state)).toEqual(['accepted', 'accepted']);
    expect(broker.stats().queues.find((x) => x.name === q)?.depth).toBe(4);
    const r = new TestReceiver(conn, q);
    const got = await r.next(4);
    expect(got.map((g) => g.message.body)).toEqual(['d1', 'd2', 'n1', 'n1']);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('a sender not asking for dedup re-using message-ids (Proton simple_send run twice) gets every message delivered', async () => {
    const q = fresh('no-dedup');
    const run = (): RheaMessage[] => [1, 2, 3].map((i) => ({ body: `seq ${i}`, message_id: i }));
    const first = await sendAll(conn, q, run());
    const second = await sendAll(conn, q, run());
    expect([...first, ...second].map((o) => o.state)).toEqual(Array(6).fill('accepted'));
    const r = new TestReceiver(conn, q);
    const got = await r.next(6);
    expect(got.map((g) => g.message.body)).toEqual(['seq 1', 'seq 2', 'seq 3', 'seq 1', 'seq 2', 'seq 3']);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('expires messages by TTL', async () => {
    const q = fresh('ttl');
    await sendAll(conn, q, [
      { body: 'short', ttl: 100, message_id: 't1' },
      { body: 'long', ttl: 60_000, message_id: 't2' },
      { body: 'none', message_id: 't3' },
    ]);
    await new Promise((r) => setTimeout(r, 300)); // let the 100 ms TTL pass
    const r = new TestReceiver(conn, q);
    const got = await r.next(2);
    expect(got.map((g) => g.message.body)).toEqual(['long', 'none']);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('rcv-settle-mode second: the broker settles after committing the accept', async () => {
    const q = fresh('second');
    await sendAll(conn, q, [
      { body: 'a', message_id: 's1' },
      { body: 'b', message_id: 's2' },
    ]);
    const r = new TestReceiver(conn, q, { rcv_settle_mode: 1 });
    await r.opened;
    expect(
      (r.link as unknown as { remote: { attach: { rcv_settle_mode: number } } }).remote.attach
        .rcv_settle_mode,
    ).toBe(1);
    const got = await r.next(2);
    // one outcome per tick: rhea 3.0.5 merges different outcomes into one disposition range
    got[0]!.delivery.accept();
    await r.until(() => r.settledDeliveries.length >= 1, 5000, 'broker settlement');
    got[1]!.delivery.release();
    await r.until(() => r.settledDeliveries.length >= 2, 5000, 'broker settlement');
    const [again] = await r.next(1);
    expect(again!.message.body).toBe('b');
    again!.delivery.accept();
    await r.until(() => r.settledDeliveries.length >= 3, 5000, 'broker settlement');
    expect(broker.stats().queues.find((x) => x.name === q)?.depth).toBe(0);
    r.link.close();
  });

  it('a detached consumer gives its unsettled messages back, each a delivery more (delivery-count 1)', async () => {
    const q = fresh('detach');
    await sendAll(conn, q, [{ body: 'h1' }, { body: 'h2' }]);
    const r1 = new TestReceiver(conn, q);
    const got = await r1.next(2);
    got[0]!.delivery.accept();
    r1.link.close();
    const r2 = new TestReceiver(conn, q);
    const [b] = await r2.next(1);
    expect(b!.message.body).toBe('h2');
    expect(b!.message.delivery_count ?? 0).toBe(1);
    b!.delivery.accept();
    r2.link.close();
  });

  it('consumers whose sockets drop mid-stream give every held message back', async () => {
    const q = fresh('drop');
    const n = 300;
    await sendAll(
      conn,
      q,
      Array.from({ length: n }, (_, i) => ({ body: i })),
    );
    const victims = await Promise.all(Array.from({ length: 5 }, () => connect({ port: broker.port })));
    const receivers = victims.map((c) => new TestReceiver(c, q));
    await Promise.all(receivers.map((r) => r.next(40)));
    expect(broker.stats().queues.find((x) => x.name === q)?.acquired).toBe(200);
    for (const c of victims) (c as unknown as { socket: { destroy(): void } }).socket.destroy();
    await waitFor(() => broker.stats().queues.find((x) => x.name === q)?.acquired === 0, {
      timeoutMs: 10_000,
      what: 'broker.stats().queues.find((x) => x.name === q)?.acquired === 0',
      intervalMs: 20,
    });
    const r = new TestReceiver(conn, q);
    const got = await r.next(n);
    expect(new Set(got.map((g) => g.message.body)).size).toBe(n);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('a receiver re-attached under the same container-id and name steals the link', async () => {
    const q = fresh('steal');
    await sendAll(conn, q, [{ body: 'st1' }]);
    const c1 = await connect({ port: broker.port, containerId: 'steal-container' });
    const c2 = await connect({ port: broker.port, containerId: 'steal-container' });
    const r1 = new TestReceiver(c1, q, { name: 'the-link' });
    const [a] = await r1.next(1);
    expect(a!.message.body).toBe('st1');
    const r2 = new TestReceiver(c2, q, { name: 'the-link' });
    await r1.until(() => r1.closedByPeer, 5000, 'stolen detach');
    expect(r1.error?.condition).toBe('amqp:link:stolen');
    // what the predecessor held is offered to the successor
    const [b] = await r2.next(1);
    expect(b!.message.body).toBe('st1');
    b!.delivery.accept();
    await closeConnection(c1);
    await closeConnection(c2);
  });

  it('drain: sends what is available, then answers by advancing delivery-count', async () => {
    const q = fresh('drain');
    await sendAll(conn, q, [{ body: 'd1' }, { body: 'd2' }, { body: 'd3' }]);
    const r = new TestReceiver(conn, q);
    await r.opened;
    let drained = 0;
    r.link.on('receiver_drained', () => drained++);
    r.link.add_credit(10);
    r.link.drain_credit();
    await r.until(() => drained === 1, 5000, 'drained');
    const got = await r.next(3);
    expect(got.map((g) => g.message.body)).toEqual(['d1', 'd2', 'd3']);
    expect((r.link as unknown as { credit: number }).credit).toBe(0);
    for (const g of got) g.delivery.accept();
    // empty queue: drained at once
    r.link.add_credit(5);
    r.link.drain_credit();
    await r.until(() => drained === 2, 5000, 'drained again');
    expect((r.link as unknown as { credit: number }).credit).toBe(0);
    r.link.close();
  });

  it("a message over the receiver's max-message-size is never offered to that link", async () => {
    const q = fresh('max-size');
    await sendAll(conn, q, [{ body: 'x'.repeat(2000) }, { body: 'small' }]);
    const small = new TestReceiver(conn, q, { max_message_size: 1000 });
    const [m] = await small.next(1);
    expect(m!.message.body).toBe('small');
    m!.delivery.accept();
    const big = new TestReceiver(conn, q);
    const [b] = await big.next(1);
    expect((b!.message.body as string).length).toBe(2000);
    b!.delivery.accept();
    small.link.close();
    big.link.close();
  });

  it('a pre-settled consumer (snd-settle-mode settled) removes messages as it sends them', async () => {
    const q = fresh('presettled');
    await sendAll(conn, q, [{ body: 'p1' }, { body: 'p2' }]);
    const r = new TestReceiver(conn, q, { snd_settle_mode: 1 });
    const got = await r.next(2);
    expect(got.map((g) => g.message.body)).toEqual(['p1', 'p2']);
    await waitFor(() => broker.stats().queues.find((x) => x.name === q)?.depth === 0, {
      timeoutMs: 5000,
      what: 'broker.stats().queues.find((x) => x.name === q)?.depth === 0',
      intervalMs: 20,
    });
    r.link.close();
  });
});

/** rhea: a data section body is produced by message.data_section(buffer). */
function rheaData(buf: Buffer): unknown {
  return rheaMessage.data_section(buf);
}

const rheaMessage = (rhea as unknown as { message: { data_section(b: Buffer): unknown } }).message;
