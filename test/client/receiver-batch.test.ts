/** receiver.receive({ max, timeoutMs }): the batch receive, against the reference broker. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Delivery, Receiver } from '../../src/index.js';
import { brokerAndConnection } from '../support/broker.js';

const env = brokerAndConnection();

async function fill(queue: string, ids: string[]): Promise<void> {
  const sender = await env.conn.openSender(queue);
  await Promise.all(sender.sendBatch(ids.map((id) => ({ messageId: id, body: id }))));
  await sender.close();
}

/** Resolves once `receiver` has `n` deliveries buffered (a readiness signal, not a sleep). */
async function buffered(receiver: Receiver, n: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (receiver.buffered < n) {
    if (Date.now() > deadline) throw new Error(`only ${receiver.buffered} of ${n} buffered`);
    await new Promise((r) => setImmediate(r));
  }
}

describe('receiver.receive({ max })', () => {
  it('is typed: an array with max, one Delivery without', () => {
    expectTypeOf<Receiver['receive']>().toBeFunction();
    const r = null as unknown as Receiver<{ n: number }>;
    const typed = () => ({
      many: r.receive({ max: 5 }),
      one: r.receive(),
      deadline: r.receive({ timeoutMs: 1 }),
    });
    expectTypeOf<ReturnType<typeof typed>['many']>().toEqualTypeOf<Promise<Delivery<{ n: number }>[]>>();
    expectTypeOf<ReturnType<typeof typed>['one']>().toEqualTypeOf<Promise<Delivery<{ n: number }>>>();
    expectTypeOf<ReturnType<typeof typed>['deadline']>().toEqualTypeOf<Promise<Delivery<{ n: number }>>>();
  });

  it('returns what is buffered up to max, in order, without waiting for more', async () => {
    await fill('batch-up-to', ['a', 'b', 'c', 'd', 'e']);
    const receiver = await env.conn.openReceiver('batch-up-to', { credit: 10 });
    await buffered(receiver, 5);
    const first = await receiver.receive({ max: 3, timeoutMs: 10_000 });
    expect(first.map((d) => d.message.messageId)).toEqual(['a', 'b', 'c']);
    expect(receiver.buffered).toBe(2);
    // fewer buffered than max: resolves with those two at once
    const rest = await receiver.receive({ max: 100, timeoutMs: 10_000 });
    expect(rest.map((d) => d.message.messageId)).toEqual(['d', 'e']);
    await Promise.all([...first, ...rest].map((d) => d.accept()));
    await receiver.close();
  });

  it('waits for the first delivery, then resolves with it', async () => {
    const receiver = await env.conn.openReceiver('batch-wait', { credit: 10 });
    const pending = receiver.receive({ max: 10, timeoutMs: 20_000 });
    await fill('batch-wait', ['late']);
    const got = await pending;
    expect(got.length).toBeGreaterThanOrEqual(1);
    expect(got[0]!.message.messageId).toBe('late');
    await Promise.all(got.map((d) => d.accept()));
    await receiver.close();
  });

  it('nothing by the deadline: the quorate:timeout error of a single receive()', async () => {
    const receiver = await env.conn.openReceiver('batch-empty', { credit: 10 });
    await expect(receiver.receive({ max: 10, timeoutMs: 100 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
      description: 'receive timed out after 100 ms',
    });
    await expect(receiver.receive({ timeoutMs: 100 })).rejects.toMatchObject({
      condition: 'quorate:timeout',
      description: 'receive timed out after 100 ms',
    });
    // a timed-out batch no longer waits: the next message goes to the next caller
    await fill('batch-empty', ['after']);
    const [d] = await receiver.receive({ max: 5, timeoutMs: 20_000 });
    expect(d?.message.messageId).toBe('after');
    await d?.accept();
    await receiver.close();
  });

  it('aborted, closed, bad max: rejects as a single receive() would', async () => {
    const receiver = await env.conn.openReceiver('batch-ends', { credit: 10 });
    const ac = new AbortController();
    const aborted = receiver.receive({ max: 2, signal: ac.signal });
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ condition: 'quorate:aborted' });
    await expect(receiver.receive({ max: 0 })).rejects.toMatchObject({ code: 'ERR_OUT_OF_RANGE' });
    await expect(receiver.receive({ max: 1.5 })).rejects.toMatchObject({ code: 'ERR_OUT_OF_RANGE' });
    await expect(receiver.receive({ max: '3' as never })).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG_TYPE',
    });
    const waiting = receiver.receive({ max: 2, timeoutMs: 20_000 }).catch((e: unknown) => e);
    await receiver.close();
    expect(await waiting).toMatchObject({ condition: 'quorate:closed' });
    await expect(receiver.receive({ max: 2 })).rejects.toMatchObject({ condition: 'quorate:closed' });
  });

  it('single and batch callers are served in call order', async () => {
    const receiver = await env.conn.openReceiver('batch-order', { credit: 10 });
    const one = receiver.receive({ timeoutMs: 20_000 });
    const many = receiver.receive({ max: 10, timeoutMs: 20_000 });
    await fill('batch-order', ['m1']);
    expect((await one).message.messageId).toBe('m1');
    await fill('batch-order', ['m2', 'm3']);
    const ids = (await many).map((d) => d.message.messageId);
    expect(ids[0]).toBe('m2');
    const rest = ids.length === 1 ? await receiver.receive({ max: 10, timeoutMs: 20_000 }) : [];
    expect([...ids, ...rest.map((d) => d.message.messageId)]).toEqual(['m2', 'm3']);
    await receiver.close();
  });

  it('credit is topped up as batches are handed out: more messages than the window all arrive', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => `w-${i}`);
    await fill('batch-window', ids);
    const receiver = await env.conn.openReceiver('batch-window', { credit: 20 });
    const got: string[] = [];
    while (got.length < ids.length) {
      const batch = await receiver.receive({ max: 7, timeoutMs: 20_000 });
      expect(batch.length).toBeGreaterThanOrEqual(1);
      expect(batch.length).toBeLessThanOrEqual(7);
      for (const d of batch) {
        got.push(String(d.message.messageId));
        void d.accept();
      }
    }
    expect(got).toEqual(ids);
    await receiver.close();
  });
});
