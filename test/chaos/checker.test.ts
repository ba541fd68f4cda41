import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSubscriptions, checkTotalQueue, type HistoryOp } from './checker.js';

let t = 0;
const op = (
  type: HistoryOp['type'],
  f: HistoryOp['f'],
  value: HistoryOp['value'],
  extra: Partial<HistoryOp> = {},
): HistoryOp => ({ process: extra.process ?? 0, type, f, value, time: t++, ...extra });
/** an enqueue invoke plus its completion */
const enq = (value: string, result: 'ok' | 'fail' | 'info' | 'none'): HistoryOp[] =>
  result === 'none'
    ? [op('invoke', 'enqueue', value)]
    : [op('invoke', 'enqueue', value), op(result, 'enqueue', value)];
const deq = (value: string, acceptConfirmed = true, process: HistoryOp['process'] = 1): HistoryOp[] => [
  op('invoke', 'dequeue', null, { process }),
  op('ok', 'dequeue', value, { process, acceptConfirmed }),
];

const MAIN_KEYS = [
  'acknowledged-count',
  'attempt-count',
  'details',
  'duplicated-count',
  'lost-count',
  'ok-count',
  'recovered-count',
  'unexpected-count',
  'valid',
];

describe('checkTotalQueue (Jepsen total-queue)', () => {
  it('returns exactly the Jepsen keys (plus details)', () => {
    const r = checkTotalQueue([]);
    expect(Object.keys(r).sort()).toEqual(MAIN_KEYS);
    expect(r.valid).toBe(true);
    expect(r['attempt-count']).toBe(0);
  });

  it('a clean run: every acknowledged enqueue dequeued once', () => {
    const h = [...enq('a', 'ok'), ...enq('b', 'ok'), ...deq('a'), ...deq('b')];
    const r = checkTotalQueue(h);
    expect(r).toMatchObject({
      'attempt-count': 2,
      'acknowledged-count': 2,
      'ok-count': 2,
      'lost-count': 0,
      'unexpected-count': 0,
      'duplicated-count': 0,
      'recovered-count': 0,
      valid: true,
    });
  });

  it('lost: an acknowledged enqueue never dequeued makes the run invalid', () => {
    const h = [...enq('a', 'ok'), ...enq('b', 'ok'), ...deq('a')];
    const r = checkTotalQueue(h);
    expect(r['lost-count']).toBe(1);
    expect(r.details.lost).toEqual(['b']);
    expect(r.valid).toBe(false);
  });

  it('an unacknowledged (info or fail) enqueue that never comes out is not lost', () => {
    const h = [...enq('a', 'info'), ...enq('b', 'fail'), ...enq('c', 'none')];
    const r = checkTotalQueue(h);
    expect(r['attempt-count']).toBe(3);
    expect(r['acknowledged-count']).toBe(0);
    expect(r['lost-count']).toBe(0);
    expect(r.valid).toBe(true);
  });

  it('recovered: an in-doubt enqueue that was dequeued', () => {
    const h = [...enq('a', 'info'), ...enq('b', 'ok'), ...deq('a'), ...deq('b')];
    const r = checkTotalQueue(h);
    expect(r['recovered-count']).toBe(1);
    expect(r.details.recovered).toEqual(['a']);
    expect(r['ok-count']).toBe(2);
    expect(r.valid).toBe(true);
  });

  it('unexpected: a value never attempted makes the run invalid', () => {
    const h = [...enq('a', 'ok'), ...deq('a'), ...deq('zzz'), ...deq('zzz')];
    const r = checkTotalQueue(h);
    expect(r['unexpected-count']).toBe(2);
    expect(r['duplicated-count']).toBe(0);
    expect(r['ok-count']).toBe(1);
    expect(r.valid).toBe(false);
  });

  it('duplicated with one consumer per queue: any surplus dequeue, even after an accept in doubt', () => {
    const h = [...enq('a', 'ok'), ...deq('a', false), ...deq('a', true)];
    const r = checkTotalQueue(h);
    expect(r['duplicated-count']).toBe(1);
    expect(r['ok-count']).toBe(1);
    expect(r['lost-count']).toBe(0);
    expect(r.valid).toBe(false);
    expect(checkTotalQueue(h, { allowDuplicates: true }).valid).toBe(true);
  });

  it('competing consumers: a duplicate counts only after a confirmed accept', () => {
    const inDoubtFirst = [...enq('a', 'ok'), ...deq('a', false, 1), ...deq('a', true, 2)];
    const r1 = checkTotalQueue(inDoubtFirst, { singleConsumerPerQueue: false });
    expect(r1['duplicated-count']).toBe(0);
    expect(r1.details.rawDuplicatedCount).toBe(1);
    expect(r1.valid).toBe(true);

    const confirmedFirst = [...enq('b', 'ok'), ...deq('b', true, 1), ...deq('b', true, 2)];
    const r2 = checkTotalQueue(confirmedFirst, { singleConsumerPerQueue: false });
    expect(r2['duplicated-count']).toBe(1);
    expect(r2.details.duplicated).toEqual(['b']);
    expect(r2.valid).toBe(false);

    // in doubt, then confirmed, then a third delivery: the third is a real duplicate
    const third = [...enq('c', 'ok'), ...deq('c', false, 1), ...deq('c', true, 2), ...deq('c', true, 1)];
    expect(checkTotalQueue(third, { singleConsumerPerQueue: false })['duplicated-count']).toBe(1);
  });

  it('orders dequeues by time, not by position, when every op has a time', () => {
    // the confirmed delivery happened later although recorded earlier
    const h: HistoryOp[] = [
      { process: 0, type: 'invoke', f: 'enqueue', value: 'a', time: 0 },
      { process: 0, type: 'ok', f: 'enqueue', value: 'a', time: 1 },
      { process: 2, type: 'ok', f: 'dequeue', value: 'a', time: 9, acceptConfirmed: true },
      { process: 1, type: 'ok', f: 'dequeue', value: 'a', time: 5, acceptConfirmed: false },
    ];
    expect(checkTotalQueue(h, { singleConsumerPerQueue: false })['duplicated-count']).toBe(0);
  });

  it('ignores fail and info dequeues and dequeues without a value', () => {
    const h = [
      ...enq('a', 'ok'),
      op('invoke', 'dequeue', null),
      op('fail', 'dequeue', null),
      op('invoke', 'dequeue', null),
      op('info', 'dequeue', 'a'),
      ...deq('a'),
    ];
    const r = checkTotalQueue(h);
    expect(r['ok-count']).toBe(1);
    expect(r['duplicated-count']).toBe(0);
    expect(r.valid).toBe(true);
  });

  it('counts a final drain like any dequeue and reports dequeues of failed enqueues', () => {
    const h = [
      ...enq('a', 'ok'),
      ...enq('b', 'fail'),
      ...enq('c', 'info'),
      op('ok', 'dequeue', 'a', { final: true }),
      op('ok', 'dequeue', 'b', { final: true }),
    ];
    const r = checkTotalQueue(h);
    expect(r).toMatchObject({
      'attempt-count': 3,
      'acknowledged-count': 1,
      'ok-count': 2,
      'lost-count': 0,
      'recovered-count': 1,
      valid: true,
    });
    expect(r.details.dequeuedAfterFail).toEqual(['b']);
  });

  it('a mixed history: every count at once', () => {
    const h = [
      ...enq('ok1', 'ok'),
      ...enq('ok2', 'ok'),
      ...enq('lost1', 'ok'),
      ...enq('doubt1', 'info'),
      ...enq('doubt2', 'info'),
      ...enq('fail1', 'fail'),
      ...deq('ok1'),
      ...deq('ok2'),
      ...deq('ok2'),
      ...deq('doubt1'),
      ...deq('ghost'),
    ];
    const r = checkTotalQueue(h);
    expect(r).toEqual({
      'attempt-count': 6,
      'acknowledged-count': 3,
      'ok-count': 3,
      'lost-count': 1,
      'unexpected-count': 1,
      'duplicated-count': 1,
      'recovered-count': 1,
      valid: false,
      details: {
        lost: ['lost1'],
        unexpected: ['ghost'],
        duplicated: ['ok2'],
        recovered: ['doubt1'],
        rawDuplicatedCount: 1,
        dequeuedAfterFail: [],
      },
    });
  });

  it('numbers and strings are different values', () => {
    const h: HistoryOp[] = [
      { process: 0, type: 'invoke', f: 'enqueue', value: 1 },
      { process: 0, type: 'ok', f: 'enqueue', value: 1 },
      { process: 1, type: 'ok', f: 'dequeue', value: '1' },
    ];
    const r = checkTotalQueue(h);
    expect(r['lost-count']).toBe(1);
    expect(r['unexpected-count']).toBe(1);
  });
});

describe('checkSubscriptions (each topic subscription a queue of every publish)', () => {
  const counts = (h: HistoryOp[], subs: string[]) =>
    [...checkSubscriptions(h, subs)].map(([name, r]) => ({
      name,
      acknowledged: r['acknowledged-count'],
      lost: r.details.lost,
      duplicated: r.details.duplicated,
      unexpected: r.details.unexpected,
      valid: r.valid,
    }));

  it('every subscription expects every publish, and only its own dequeues count for it', () => {
    const h = [
      ...enq('a', 'ok'),
      ...enq('b', 'ok'),
      ...deq('a', true, 'east-s'),
      ...deq('b', true, 'east-s'),
    ];
    h.push(...deq('a', true, 'west-s'));
    expect(counts(h, ['east-s', 'west-s'])).toEqual([
      { name: 'east-s', acknowledged: 2, lost: [], duplicated: [], unexpected: [], valid: true },
      { name: 'west-s', acknowledged: 2, lost: ['b'], duplicated: [], unexpected: [], valid: false },
    ]);
  });

  it('a surplus hand-out is duplicated after a confirmed accept, at-least-once after one in doubt', () => {
    const h = [...enq('a', 'ok'), ...enq('b', 'ok')];
    h.push(...deq('a', true, 'east-s'), ...deq('a', true, 'east-s'));
    h.push(...deq('b', false, 'east-s'), ...deq('b', true, 'east-s'));
    h.push(...deq('a', true, 'west-s'), ...deq('b', true, 'west-s'), ...deq('x', true, 'west-s'));
    expect(counts(h, ['east-s', 'west-s'])).toEqual([
      { name: 'east-s', acknowledged: 2, lost: [], duplicated: ['a'], unexpected: [], valid: false },
      { name: 'west-s', acknowledged: 2, lost: [], duplicated: [], unexpected: ['x'], valid: false },
    ]);
  });
});

describe('checkTotalQueue properties', () => {
  it('a history where every acknowledged or recovered value comes out once is valid; dropping one acknowledged dequeue is lost', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ outcome: fc.constantFrom('ok', 'fail', 'info'), dequeued: fc.boolean() }), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.nat(),
        (plan, pick) => {
          const h: HistoryOp[] = [];
          plan.forEach((p, i) => {
            h.push({ process: 0, type: 'invoke', f: 'enqueue', value: `v${i}` });
            h.push({ process: 0, type: p.outcome as HistoryOp['type'], f: 'enqueue', value: `v${i}` });
          });
          const out = plan
            .map((p, i) => ({ p, i }))
            .filter(({ p }) => p.outcome === 'ok' || (p.outcome === 'info' && p.dequeued));
          for (const { i } of out) h.push({ process: 1, type: 'ok', f: 'dequeue', value: `v${i}` });
          const r = checkTotalQueue(h);
          expect(r.valid).toBe(true);
          expect(r['attempt-count']).toBe(plan.length);
          expect(r['ok-count']).toBe(out.length);
          expect(r['recovered-count']).toBe(out.length - r['acknowledged-count']);
          const acked = out.filter(({ p }) => p.outcome === 'ok');
          if (acked.length > 0) {
            const drop = `v${acked[pick % acked.length]!.i}`;
            const idx = h.findIndex((o) => o.f === 'dequeue' && o.value === drop);
            const broken = h.filter((_, j) => j !== idx);
            const b = checkTotalQueue(broken);
            expect(b['lost-count']).toBe(1);
            expect(b.details.lost).toEqual([drop]);
            expect(b.valid).toBe(false);
          }
        },
      ),
    );
  });
});
