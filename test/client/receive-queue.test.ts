/** ReceiveQueue: the order callers are served in, and what a waiting batch carries. */
import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../bench/lib/full-gc.js';
import { timeoutError } from '../../src/client/deadline.js';
import { type BatchWaiter, type OneWaiter, ReceiveQueue } from '../../src/client/receive-queue.js';

function batch(max: number): { w: BatchWaiter<number>; p: Promise<number[] | undefined> } {
  let w!: BatchWaiter<number>;
  const p = new Promise<number[] | undefined>((resolve, reject) => {
    w = { max, resolve, reject };
  });
  return { w, p };
}

function one(): { w: OneWaiter<number>; p: Promise<IteratorResult<number, undefined>> } {
  let w!: OneWaiter<number>;
  const p = new Promise<IteratorResult<number, undefined>>((resolve, reject) => {
    w = { resolve, reject };
  });
  return { w, p };
}

describe('ReceiveQueue', () => {
  it('a waiting batch carries every delivery pushed in the same synchronous run, up to max', async () => {
    const handedOut: number[] = [];
    const q = new ReceiveQueue<number>({
      handOut: (d) => {
        handedOut.push(d);
        return d;
      },
    });
    const b = batch(3);
    q.wait(b.w);
    for (const d of [1, 2, 3, 4]) q.push(d); // one socket read's transfers
    expect(await b.p).toEqual([1, 2, 3]);
    expect(handedOut).toEqual([1, 2, 3]);
    expect(q.length).toBe(1);
    expect(q.takeUpTo(10)).toEqual([4]);
  });

  it('a caller arriving while a batch answer is queued waits behind it', async () => {
    const q = new ReceiveQueue<number>({ handOut: (d) => d });
    const b = batch(10);
    q.wait(b.w);
    q.push(1);
    // the batch's answer is queued for the microtask: nobody may take 1 ahead of it
    expect(q.shift()).toBeUndefined();
    expect(q.takeUpTo(5)).toBeUndefined();
    const later = one();
    expect(q.serveNow(later.w)).toBe(false);
    q.wait(later.w);
    q.push(2);
    expect(await b.p).toEqual([1, 2]);
    q.push(3);
    expect(await later.p).toEqual({ done: false, value: 3 });
  });

  it('a single waiter is answered at once; ending answers every waiter', async () => {
    const q = new ReceiveQueue<number>({ handOut: (d) => d });
    const a = one();
    q.wait(a.w);
    q.push(7);
    expect(await a.p).toEqual({ done: false, value: 7 });
    const b = batch(2);
    const c = one();
    q.wait(b.w);
    q.wait(c.w);
    q.endWaiters(undefined);
    expect(await b.p).toBeUndefined();
    expect(await c.p).toEqual({ done: true, value: undefined });
    const d = batch(2);
    q.wait(d.w);
    q.endWaiters(new Error('lost'));
    await expect(d.p).rejects.toThrow('lost');
  });

  it('a batch waiter answered after the buffer was dropped keeps waiting', async () => {
    const q = new ReceiveQueue<number>({ handOut: (d) => d });
    const b = batch(5);
    q.wait(b.w);
    q.push(1);
    expect(q.clear()).toEqual([1]); // connection lost before the microtask
    await Promise.resolve();
    q.push(2);
    expect(await b.p).toEqual([2]);
  });

  it('one timer for every waiting caller: the one past its deadline rejects, the others still wait', async () => {
    const q = new ReceiveQueue<number>({ handOut: (d) => d });
    const early = batch(5);
    const late = batch(5);
    Object.assign(early.w, q.deadline(30));
    Object.assign(late.w, q.deadline(60_000));
    q.wait(early.w);
    q.wait(late.w);
    await expect(early.p).rejects.toMatchObject({
      condition: 'quorate:timeout',
      description: 'receive timed out after 30 ms',
    });
    q.push(7);
    expect(await late.p).toEqual([7]);
    // no deadline: waits however long it takes
    expect(q.deadline(undefined)).toEqual({});
    expect(q.deadline(Number.POSITIVE_INFINITY)).toEqual({});
  });

  it('expiry keeps the line in order and re-arms for the next deadline, with the error a Deadline gives', async () => {
    const q = new ReceiveQueue<number>({ handOut: (d) => d });
    const untimed = one();
    const early = batch(5);
    const late = one();
    const last = batch(5);
    Object.assign(early.w, q.deadline(20));
    Object.assign(late.w, q.deadline(80));
    q.wait(untimed.w);
    q.wait(early.w);
    q.wait(late.w);
    q.wait(last.w);
    const expected = timeoutError('receive', 20);
    await expect(early.p).rejects.toMatchObject({
      condition: expected.condition,
      description: expected.description,
    });
    // the timer fired once for `early`; `late` is only answered if it was armed again
    await expect(late.p).rejects.toMatchObject({ description: 'receive timed out after 80 ms' });
    q.push(1);
    q.push(2);
    expect(await untimed.p).toEqual({ done: false, value: 1 });
    expect(await last.p).toEqual([2]);
  });

  it('an ended queue keeps nothing alive: the timer a deadline armed is cleared', async () => {
    // what a closed receiver leaves: its last receive() was answered in time, its deadline far off
    let q: ReceiveQueue<number> | undefined = new ReceiveQueue<number>({ handOut: (d) => d });
    const ref = new WeakRef(q);
    const answered = batch(5);
    Object.assign(answered.w, q.deadline(600_000));
    q.wait(answered.w);
    q.push(1);
    expect(await answered.p).toEqual([1]);
    q.endWaiters(undefined);
    q = undefined;
    // a WeakRef's target is kept until the job that made it ends
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
  });
});
