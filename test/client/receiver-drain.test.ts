/** receiver.drain() and sender.sendBatch() against the reference broker. */
import { describe, expect, it } from 'vitest';
import { brokerAndConnection } from '../support/broker.js';

const env = brokerAndConnection();

describe('receiver.drain()', () => {
  it('credit 0 + addCredit(10) + drain(): the 3 queued messages arrive, then the credit is 0', async () => {
    const sender = await env.conn.openSender('drain-q');
    await Promise.all(sender.sendBatch([1, 2, 3].map((i) => ({ body: i }))));
    const receiver = await env.conn.openReceiver('drain-q', { credit: 0 });
    receiver.addCredit(10);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(receiver.buffered).toBe(3);
    expect(receiver.linkCredit).toBe(0);
    const bodies: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await receiver.receive({ timeoutMs: 1_000 });
      bodies.push(d.message.body);
      await d.accept();
    }
    expect(bodies).toEqual([1, 2, 3]);
    // nothing left: a drain on an empty queue answers at once
    receiver.addCredit(5);
    await receiver.drain({ timeoutMs: 10_000 });
    expect(receiver.buffered).toBe(0);
    await receiver.close();
  });

  it('a drain on a closed receiver rejects', async () => {
    const receiver = await env.conn.openReceiver('drain-closed', { credit: 0 });
    await receiver.close();
    await expect(receiver.drain()).rejects.toMatchObject({ condition: 'quorate:illegal-state' });
  });
});

describe('sender.sendBatch()', () => {
  it('one promise per message, in order, each ending like send()', async () => {
    const sender = await env.conn.openSender('batch-q');
    const results = await Promise.all(
      sender.sendBatch(['a', 'b', 'c'].map((id) => ({ messageId: id, body: id }))),
    );
    expect(results.map((r) => [r.state, r.messageId])).toEqual([
      ['accepted', 'a'],
      ['accepted', 'b'],
      ['accepted', 'c'],
    ]);
    expect(() => sender.sendBatch('x' as never)).toThrow(TypeError);
  });
});
