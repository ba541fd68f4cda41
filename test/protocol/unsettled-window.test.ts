import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { serialDiff } from '../../src/protocol/conditions.js';
import { UnsettledWindow } from '../../src/protocol/unsettled-window.js';

interface D {
  id: number;
}

/** One step: track the next id (after `gap` untracked ones), settle one tracked, or settle a range. */
type Op = { t: 'add'; gap: number } | { t: 'del'; pick: number } | { t: 'range'; from: number; len: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    t: fc.constant('add' as const),
    gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
  }),
  fc.record({ t: fc.constant('del' as const), pick: fc.nat() }),
  fc.record({ t: fc.constant('range' as const), from: fc.nat(), len: fc.integer({ min: 1, max: 6000 }) }),
);

/** What a Map keyed by id (the engine's old tracking) holds, oldest first. */
function modelValues(model: Map<number, D>): D[] {
  return [...model.values()];
}

describe('UnsettledWindow', () => {
  it('tracks, finds, settles and walks ranges exactly as a map by id does (ids wrapping at 2^32)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 0xffffffff - 5000, 0xffffffff),
        fc.array(op, { minLength: 1, maxLength: 300 }),
        (start, ops) => {
          const w = new UnsettledWindow<D>();
          const model = new Map<number, D>();
          let next = start;
          for (const o of ops) {
            if (o.t === 'add') {
              next = (next + o.gap) >>> 0;
              const d = { id: next };
              next = (next + 1) >>> 0;
              w.add(d);
              model.set(d.id, d);
            } else if (o.t === 'del') {
              const live = modelValues(model);
              if (live.length === 0) continue;
              const d = live[o.pick % live.length]!;
              w.delete(d);
              model.delete(d.id);
            } else {
              const live = modelValues(model);
              const first = live.length === 0 ? next : (live[o.from % live.length]!.id - 2) >>> 0;
              const last = (first + o.len - 1) >>> 0;
              const seen: D[] = [];
              // settling inside the walk, as the session does
              w.forRange(first, last, (d) => {
                seen.push(d);
                w.delete(d);
              });
              const want = live.filter((d) => serialDiff(d.id, first) >= 0 && serialDiff(last, d.id) >= 0);
              expect(seen).toEqual(want);
              for (const d of want) model.delete(d.id);
            }
            expect(w.size).toBe(model.size);
            expect(w.values()).toEqual(modelValues(model));
          }
          for (const [id, d] of model) expect(w.get(id)).toBe(d);
          expect(w.get(next)).toBeUndefined();
        },
      ),
    );
  });

  it('ids a peer chooses (repeated, older, far ahead) mean what they mean in a map by id', () => {
    const byId = (a: D, b: D): number => a.id - b.id;
    // ids near a start point: some repeat, some go back, some jump past the array's span
    const peerOp = fc.oneof(
      fc.record({ t: fc.constant('put' as const), id: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ t: fc.constant('put' as const), id: fc.integer({ min: 0, max: 20_000 }) }),
      fc.record({ t: fc.constant('del' as const), pick: fc.nat() }),
      fc.record({
        t: fc.constant('range' as const),
        id: fc.integer({ min: 0, max: 20_000 }),
        len: fc.nat(9000),
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(0, 0xffffffff - 10),
        fc.array(peerOp, { minLength: 1, maxLength: 200 }),
        (start, ops) => {
          const w = new UnsettledWindow<D>();
          const model = new Map<number, D>();
          for (const o of ops) {
            if (o.t === 'put') {
              const d = { id: (start + o.id) >>> 0 };
              w.add(d);
              model.set(d.id, d);
            } else if (o.t === 'del') {
              const live = [...model.values()];
              if (live.length === 0) continue;
              const d = live[o.pick % live.length]!;
              w.delete(d);
              model.delete(d.id);
            } else {
              const first = (start + o.id) >>> 0;
              const last = (first + o.len) >>> 0;
              const seen: D[] = [];
              w.forRange(first, last, (d) => {
                seen.push(d);
                w.delete(d);
              });
              const want = [...model.values()].filter(
                (d) => serialDiff(d.id, first) >= 0 && serialDiff(last, d.id) >= 0,
              );
              expect(seen.sort(byId)).toEqual(want.sort(byId));
              for (const d of want) model.delete(d.id);
            }
            expect(w.size).toBe(model.size);
            expect(w.values().sort(byId)).toEqual([...model.values()].sort(byId));
            for (const [id, d] of model) expect(w.get(id)).toBe(d);
          }
        },
      ),
    );
  });

  it('an id far ahead of the array does not fill the gap to it', () => {
    const w = new UnsettledWindow<D>();
    const old = { id: 0 };
    w.add(old);
    const slots = (w as unknown as { slots: unknown[] }).slots;
    const push = vi.spyOn(slots, 'push');
    const far = { id: 0x7fff_0000 };
    w.add(far);
    expect(push.mock.calls.length).toBeLessThanOrEqual(1);
    expect(w.get(0)).toBe(old);
    expect(w.get(0x7fff_0000)).toBe(far);
    expect(w.size).toBe(2);
  });

  it('one delivery left unsettled does not make the window span every id sent since', () => {
    const w = new UnsettledWindow<D>();
    const old = { id: 7 };
    w.add(old);
    for (let id = 8; id < 200_000; id++) {
      const d = { id };
      w.add(d);
      w.delete(d);
    }
    expect(w.size).toBe(1);
    expect(w.get(7)).toBe(old);
    // the array part spans at most a few thousand ids, not 200,000
    const slots = (w as unknown as { slots: unknown[] }).slots;
    expect(slots.length).toBeLessThanOrEqual(4097);
    const seen: D[] = [];
    w.forRange(0, 10, (d) => seen.push(d));
    expect(seen).toEqual([old]);
  });

  it('a range as wide as serial order allows (2^31 ids) costs only what is tracked', () => {
    const w = new UnsettledWindow<D>();
    for (let id = 0; id < 5; id++) w.add({ id });
    const seen: number[] = [];
    w.forRange(0, 0x7ffffff0, (d) => seen.push(d.id));
    expect(seen).toEqual([0, 1, 2, 3, 4]);
  });
});
