/**
 * rhea 3.0.5 (an independent AMQP 1.0 client) against our broker, the single node and a cluster
 * follower (rhea-broker.ts), what a message carries: bodies and properties, large multi-frame
 * messages, duplicate detection, TTL, max-message-size.
 */
import rhea from 'rhea';
import { expect } from 'vitest';
import { type RheaMessage, sendAll, TestReceiver } from '../../../cluster-broker/server/rhea-client.js';
import { fresh, onEachTarget, waitCounts } from './rhea-broker.js';

onEachTarget('rhea client against the broker', (t, it) => {
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
    const outcomes = await sendAll(t.conn, q, messages);
    expect(outcomes.map((o) => o.state)).toEqual(bodies.map(() => 'accepted'));
    const r = new TestReceiver(t.conn, q);
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
    const outcomes = await sendAll(t.conn, q, [
      { body: rheaData(big), message_id: 'big-1' },
      { body: rheaData(big.subarray(1)), message_id: 'big-2' },
    ]);
    expect(outcomes.map((o) => o.state)).toEqual(['accepted', 'accepted']);
    const r = new TestReceiver(t.conn, q);
    const got = await r.next(2, 30_000);
    expect(Buffer.from(got[0]!.message.body.content as Buffer).equals(big)).toBe(true);
    expect(Buffer.from(got[1]!.message.body.content as Buffer).equals(big.subarray(1))).toBe(true);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('a sender desiring quorate:dedup: a re-send of a message-id is accepted and not enqueued twice', async () => {
    const q = fresh('dedup');
    const dedup = { desired_capabilities: ['quorate:dedup'] };
    const first = await sendAll(
      t.conn,
      q,
      [{ body: 'd1', message_id: 'dup-1' }, { body: 'd2', message_id: 'dup-2' }, { body: 'n1' }],
      dedup,
    );
    expect(first.map((o) => o.state)).toEqual(['accepted', 'accepted', 'accepted']);
    const again = await sendAll(
      t.conn,
      q,
      [{ body: 'd1 again', message_id: 'dup-1' }, { body: 'n1' }],
      dedup,
    );
    expect(again.map((o) => o.state)).toEqual(['accepted', 'accepted']);
    await waitCounts(t, q, { depth: 4 });
    const r = new TestReceiver(t.conn, q);
    const got = await r.next(4);
    expect(got.map((g) => g.message.body)).toEqual(['d1', 'd2', 'n1', 'n1']);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('a sender not asking for dedup re-using message-ids (Proton simple_send run twice) gets every message delivered', async () => {
    const q = fresh('no-dedup');
    const run = (): RheaMessage[] => [1, 2, 3].map((i) => ({ body: `seq ${i}`, message_id: i }));
    const first = await sendAll(t.conn, q, run());
    const second = await sendAll(t.conn, q, run());
    expect([...first, ...second].map((o) => o.state)).toEqual(Array(6).fill('accepted'));
    const r = new TestReceiver(t.conn, q);
    const got = await r.next(6);
    expect(got.map((g) => g.message.body)).toEqual(['seq 1', 'seq 2', 'seq 3', 'seq 1', 'seq 2', 'seq 3']);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it('expires messages by TTL', async () => {
    const q = fresh('ttl');
    await sendAll(t.conn, q, [
      { body: 'short', ttl: 100, message_id: 't1' },
      { body: 'long', ttl: 60_000, message_id: 't2' },
      { body: 'none', message_id: 't3' },
    ]);
    await new Promise((r) => setTimeout(r, 300)); // let the 100 ms TTL pass
    const r = new TestReceiver(t.conn, q);
    const got = await r.next(2);
    expect(got.map((g) => g.message.body)).toEqual(['long', 'none']);
    for (const g of got) g.delivery.accept();
    r.link.close();
  });

  it("a message over the receiver's max-message-size is never offered to that link", async () => {
    const q = fresh('max-size');
    await sendAll(t.conn, q, [{ body: 'x'.repeat(2000) }, { body: 'small' }]);
    const small = new TestReceiver(t.conn, q, { max_message_size: 1000 });
    const [m] = await small.next(1);
    expect(m!.message.body).toBe('small');
    m!.delivery.accept();
    const big = new TestReceiver(t.conn, q);
    const [b] = await big.next(1);
    expect((b!.message.body as string).length).toBe(2000);
    b!.delivery.accept();
    small.link.close();
    big.link.close();
  });
});

/** rhea: a data section body is produced by message.data_section(buffer). */
function rheaData(buf: Buffer): unknown {
  return rheaMessage.data_section(buf);
}

const rheaMessage = (rhea as unknown as { message: { data_section(b: Buffer): unknown } }).message;
