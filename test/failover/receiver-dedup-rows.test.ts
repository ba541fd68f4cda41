import { describe, expect, it } from 'vitest';
import { ReceiverDedup } from '../../src/failover/receiver-dedup.js';
import { ACCEPTED } from '../../src/protocol/index.js';

// The window's storage: rows in a pool reused through a free list, an eviction list of remembered
// rows, and the (key, row) pairs the Receiver passes back (ReceiverDedup.admit).
const rejected = { type: 'rejected', error: { condition: 'amqp:internal-error' } } as const;
const released = { type: 'released' } as const;
const inTxn = { type: 'transactional-state', txnId: Uint8Array.of(1), outcome: ACCEPTED } as const;

describe('ReceiverDedup rows', () => {
  it('keeps an id pending while many more ids than maxIds are settled and evicted around it', () => {
    const d = new ReceiverDedup<string>({ maxIds: 3, maxAgeMs: 1e9 });
    const p = d.admit('p', 'held', 0);
    expect(p).toBeTypeOf('number');
    d.onHandedOut('p', 'held', p as number);
    for (let i = 0; i < 5000; i++) {
      const r = d.admit(`m${i}`, `t${i}`, i);
      d.onHandedOut(`m${i}`, `t${i}`, r as number);
      d.onSettled(`m${i}`, ACCEPTED, i, r as number);
    }
    expect(d.rememberedCount).toBe(3);
    expect(d.pendingCount).toBe(1);
    expect(d.admit('p', 'copy', 5000)).toEqual({
      action: 'bind',
      key: 'p',
      pending: 'held',
      handedOut: true,
    });
    expect(d.admit('m4999', 'x', 5000)).toMatchObject({ action: 'settle', outcome: ACCEPTED });
    expect(d.admit('m4996', 'x', 5000)).toBeTypeOf('number'); // evicted
    // settled at last, by the row it got 5,000 deliveries ago
    d.onSettled('p', rejected, 5001, p as number);
    expect(d.pendingCount).toBe(1); // m4996, admitted above
    expect(d.admit('p', 'again', 5002)).toEqual({ action: 'settle', key: 'p', outcome: rejected });
  });

  it('holds any number of pending ids beside a full window, each bound to its own token', () => {
    const d = new ReceiverDedup<number>({ maxIds: 2, maxAgeMs: 10 });
    const rows = new Map<string, number>();
    for (let i = 0; i < 300; i++) rows.set(`p${i}`, d.admit(`p${i}`, i, 0) as number);
    for (let i = 0; i < 50; i++) d.onSettled(`s${i}`, ACCEPTED, 1000 + i);
    expect(d.pendingCount).toBe(300);
    expect(d.rememberedCount).toBe(2);
    for (let i = 0; i < 300; i++)
      expect(d.admit(`p${i}`, -1, 2000)).toMatchObject({ action: 'bind', pending: i });
    for (const [key, row] of rows) d.onSettled(key, ACCEPTED, 2001, row);
    expect(d.pendingCount).toBe(0);
    expect(d.rememberedCount).toBe(2);
    expect(d.admit('p299', -1, 2002)).toMatchObject({ action: 'settle' });
    expect(d.admit('p297', -1, 2002)).toBeTypeOf('number');
  });

  it('keeps every id through the pool growing fourfold to a full window, then doubling', () => {
    // default maxIds 10,000: rows 16 -> 64 -> ... -> 16,384 fourfold, then 32,768 and 65,536
    const d = new ReceiverDedup<number>();
    const n = 40_000;
    const rows: number[] = [];
    for (let i = 0; i < n; i++) rows.push(d.admit(`m${i}`, i, 0) as number);
    expect(new Set(rows).size).toBe(n);
    expect(d.pendingCount).toBe(n);
    for (let i = 0; i < n; i += 997)
      expect(d.admit(`m${i}`, -1, 1)).toMatchObject({ action: 'bind', pending: i });
    for (let i = 0; i < n; i++) d.onSettled(`m${i}`, ACCEPTED, 2, rows[i]);
    expect(d.pendingCount).toBe(0);
    expect(d.rememberedCount).toBe(10_000);
    expect(d.admit(`m${n - 1}`, -1, 3)).toMatchObject({ action: 'settle', outcome: ACCEPTED });
    expect(d.admit(`m${n - 10_001}`, -1, 3)).toBeTypeOf('number'); // evicted
  });

  it('takes a row back only while it still holds the same key (a freed row reused by another id)', () => {
    const d = new ReceiverDedup<string>();
    const a = d.admit('a', 'ta', 0) as number;
    d.onHandedOut('a', 'ta', a);
    d.onSettled('a', inTxn, 1, a); // forgotten until its transaction commits: row a is free
    const b = d.admit('b', 'tb', 2) as number;
    expect(b).toBe(a); // the freed row, reused
    d.onSettled('a', ACCEPTED, 3, a); // the commit, with a's stale row
    expect(d.admit('b', 'tb2', 4)).toMatchObject({ action: 'bind', pending: 'tb' });
    expect(d.admit('a', 'ta2', 4)).toMatchObject({ action: 'settle', outcome: ACCEPTED });
    d.forgetPending('a', b); // a stale row for a remembered id: nothing happens
    d.onHandedOut('a', 'ta3', b);
    expect(d.admit('a', 'ta4', 5)).toMatchObject({ action: 'settle' });
    expect(d.admit('b', 'tb3', 5)).toMatchObject({ action: 'bind', handedOut: false });
  });

  it('forgets by age from the oldest touch, and never a pending id however old', () => {
    const d = new ReceiverDedup<string>({ maxIds: 100, maxAgeMs: 100 });
    d.admit('old-pending', 't', 0);
    d.onSettled('a', ACCEPTED, 0);
    d.onSettled('b', ACCEPTED, 50);
    expect(d.admit('a', 't', 99)).toMatchObject({ action: 'settle' }); // age 99, touched again
    expect(d.admit('b', 't', 149)).toMatchObject({ action: 'settle' }); // age 99, touched again
    expect(d.admit('a', 't', 198)).toMatchObject({ action: 'settle' }); // age 99
    expect(d.admit('b', 't', 249)).toBeTypeOf('number'); // age 100: forgotten, a kept
    expect(d.rememberedCount).toBe(1);
    d.prune(298); // a touched at 198: aged out
    expect(d.rememberedCount).toBe(0);
    expect(d.admit('old-pending', 'u', 10_000)).toMatchObject({ action: 'bind', pending: 't' });
    expect(d.admit('a', 't', 10_000)).toBeTypeOf('number');
  });

  it('a re-touched id moves to the newest end: eviction by count takes the least recently touched', () => {
    const d = new ReceiverDedup<string>({ maxIds: 2, maxAgeMs: 1e9 });
    d.onSettled('a', ACCEPTED, 0);
    d.onSettled('b', ACCEPTED, 1);
    expect(d.admit('a', 't', 2)).toMatchObject({ action: 'settle' });
    d.onSettled('c', ACCEPTED, 3); // evicts b
    expect(d.admit('b', 't', 4)).toBeTypeOf('number');
    expect(d.admit('a', 't', 4)).toMatchObject({ action: 'settle' });
    expect(d.admit('c', 't', 4)).toMatchObject({ action: 'settle' });
    // settling an already remembered id again (a second report) also re-touches it
    d.onSettled('c', rejected, 5);
    d.onSettled('a', ACCEPTED, 6);
    d.onSettled('d', ACCEPTED, 7); // evicts c (touched at 5; a at 6)
    expect(d.admit('c', 't', 8)).toBeTypeOf('number');
    expect(d.admit('a', 't', 8)).toMatchObject({ action: 'settle' });
  });

  it('with maxIds 0 remembers nothing but still binds pending ids; with 1 remembers the latest', () => {
    const none = new ReceiverDedup<string>({ maxIds: 0 });
    const r = none.admit('a', 'ta', 0) as number;
    expect(none.admit('a', 'copy', 0)).toMatchObject({ action: 'bind', pending: 'ta' });
    none.onSettled('a', ACCEPTED, 1, r);
    expect(none.rememberedCount).toBe(0);
    expect(none.pendingCount).toBe(0);
    expect(none.admit('a', 'tb', 2)).toBeTypeOf('number');

    const one = new ReceiverDedup<string>({ maxIds: 1 });
    one.onSettled('a', ACCEPTED, 0);
    expect(one.admit('a', 't', 1)).toMatchObject({ action: 'settle' });
    one.onSettled('b', ACCEPTED, 2);
    expect(one.rememberedCount).toBe(1);
    expect(one.admit('a', 't', 3)).toBeTypeOf('number');
    expect(one.admit('b', 't', 3)).toMatchObject({ action: 'settle' });
    // released: forgotten at once, its row reused
    one.onSettled('b', released, 4);
    expect(one.rememberedCount).toBe(0);
    expect(one.admit('b', 't', 5)).toBeTypeOf('number');
  });
});
