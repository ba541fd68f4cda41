import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { symbol } from '../../src/codec/typed.js';
import {
  type DedupDuplicate,
  receiverDedupKey as k,
  ReceiverDedup,
} from '../../src/failover/receiver-dedup.js';
import { expectReachesLength } from '../support/property-size.js';

const accepted = { type: 'accepted' } as const;
const rejected = { type: 'rejected', error: { condition: 'amqp:internal-error' } } as const;
const released = { type: 'released' } as const;
const modified = { type: 'modified', deliveryFailed: true } as const;

/** Where a delivery to hand out sits in the window: its key and the row `admit` gave. */
interface Slot {
  readonly action: 'deliver';
  readonly key: string | undefined;
  readonly row: number;
}

/** A transfer with this message-id arrives: key it and admit it, as the Receiver does. */
function offer<T>(d: ReceiverDedup<T>, messageId: unknown, token: T, now: number): Slot | DedupDuplicate<T> {
  const key = k(messageId);
  if (key === undefined) return { action: 'deliver', key, row: -1 };
  const r = d.admit(key, token, now);
  return typeof r === 'number' ? { action: 'deliver', key, row: r } : r;
}

describe('ReceiverDedup', () => {
  it('settles a redelivery of an accepted or rejected message again, without handing it out', () => {
    const d = new ReceiverDedup<string>();
    expect(offer(d, 'a', 't1', 0)).toMatchObject({ action: 'deliver', key: 'a' });
    d.onHandedOut(k('a'), 't1');
    d.onSettled(k('a'), accepted, 1);
    expect(offer(d, 'a', 't2', 2)).toEqual({ action: 'settle', key: 'a', outcome: accepted });
    offer(d, 'b', 't3', 3);
    d.onHandedOut(k('b'), 't3');
    d.onSettled(k('b'), rejected, 4);
    expect(offer(d, 'b', 't4', 5)).toMatchObject({ action: 'settle', outcome: rejected });
  });

  it('hands out again a message that was released or modified', () => {
    const d = new ReceiverDedup<string>();
    for (const outcome of [released, modified]) {
      expect(offer(d, 'a', 't', 0).action).toBe('deliver');
      d.onHandedOut(k('a'), 't');
      d.onSettled(k('a'), outcome, 1);
    }
    expect(offer(d, 'a', 't', 2).action).toBe('deliver');
  });

  it('does not remember a transactional accept: after a rollback the redelivery is handed out again', () => {
    const d = new ReceiverDedup<string>();
    offer(d, 'a', 't1', 0);
    d.onHandedOut(k('a'), 't1');
    d.onSettled(k('a'), { type: 'transactional-state', txnId: Uint8Array.of(1), outcome: accepted }, 1);
    expect(offer(d, 'a', 't2', 2).action).toBe('deliver');
    // the client reports the plain outcome once the transaction committed
    d.onHandedOut(k('a'), 't2');
    d.onSettled(k('a'), accepted, 3);
    expect(offer(d, 'a', 't3', 4)).toMatchObject({ action: 'settle', outcome: accepted });
  });

  it('takes back the row admit gave, also once its entry left the window (a transaction committed)', () => {
    const d = new ReceiverDedup<string>();
    const slot = offer(d, 'a', 't1', 0);
    const ref = slot.action === 'deliver' ? slot : { key: undefined, row: -1 };
    d.onHandedOut(ref.key, 't1', ref.row);
    expect(offer(d, 'a', 't2', 1)).toMatchObject({ action: 'bind', pending: 't1', handedOut: true });
    // a transactional outcome forgets the entry; the commit then reports the plain outcome by the same row
    d.onSettled(
      ref.key,
      { type: 'transactional-state', txnId: Uint8Array.of(1), outcome: accepted },
      2,
      ref.row,
    );
    expect(d.pendingCount).toBe(0);
    d.onSettled(ref.key, accepted, 3, ref.row);
    expect(offer(d, 'a', 't3', 4)).toMatchObject({ action: 'settle', outcome: accepted });
    expect(d.rememberedCount).toBe(1);
  });

  it('binds a redelivery to the pending (handed out or buffered) one', () => {
    const d = new ReceiverDedup<string>();
    offer(d, 'a', 'orig', 0);
    expect(offer(d, 'a', 'copy', 1)).toEqual({
      action: 'bind',
      key: 'a',
      pending: 'orig',
      handedOut: false,
    });
    d.onHandedOut(k('a'), 'orig');
    expect(offer(d, 'a', 'copy2', 2)).toMatchObject({ action: 'bind', pending: 'orig', handedOut: true });
  });

  it('after a connection loss forgets buffered ids but keeps handed-out ones pending', () => {
    const d = new ReceiverDedup<string>();
    offer(d, 'held', 'h', 0);
    d.onHandedOut(k('held'), 'h');
    offer(d, 'buffered', 'b', 0);
    expect(d.connectionLost()).toBe(1);
    expect(offer(d, 'buffered', 'b2', 1).action).toBe('deliver');
    expect(offer(d, 'held', 'h2', 1)).toMatchObject({ action: 'bind', pending: 'h' });
  });

  it('messages without an id skip dedup', () => {
    const d = new ReceiverDedup<string>();
    expect(offer(d, undefined, 't', 0)).toMatchObject({ action: 'deliver', key: undefined });
    d.onSettled(k(undefined), accepted, 0);
    expect(offer(d, null, 't', 0).action).toBe('deliver');
    expect(d.rememberedCount).toBe(0);
  });

  it('keys by type and value', () => {
    const d = new ReceiverDedup<string>();
    offer(d, 'a', 't', 0);
    d.onSettled(k('a'), accepted, 0);
    expect(offer(d, symbol('a'), 't', 0).action).toBe('deliver');
    expect(offer(d, new Uint8Array([0x61]), 't', 0).action).toBe('deliver');
  });

  it("keeps a string that looks like another id's key apart from that id", () => {
    const d = new ReceiverDedup<string>();
    const other = k(symbol('a'))!;
    offer(d, symbol('a'), 't', 0);
    d.onSettled(other, accepted, 0);
    expect(offer(d, other, 't', 0).action).toBe('deliver');
    expect(offer(d, `\u0000string:a`, 't', 0).action).toBe('deliver');
    expect(offer(d, 'string:a', 't', 0).action).toBe('deliver');
    expect(offer(d, symbol('a'), 't', 0).action).toBe('settle');
  });

  it('forgets by age and by count', () => {
    const d = new ReceiverDedup<string>({ maxIds: 2, maxAgeMs: 100 });
    d.onSettled(k('a'), accepted, 0);
    expect(offer(d, 'a', 't', 99).action).toBe('settle'); // refreshed at 99
    expect(offer(d, 'a', 't', 198).action).toBe('settle');
    expect(offer(d, 'a', 't', 298).action).toBe('deliver');
    d.onSettled(k('x'), accepted, 300);
    d.onSettled(k('y'), accepted, 301);
    d.onSettled(k('z'), accepted, 302);
    expect(d.rememberedCount).toBe(2);
    expect(offer(d, 'x', 't', 303).action).toBe('deliver');
    expect(offer(d, 'z', 't', 303).action).toBe('settle');
  });

  it('evicts by count in order of last touch, however many times ids were refreshed', () => {
    // enough refreshes that the eviction order's stale entries are compacted away several times
    const d = new ReceiverDedup<string>({ maxIds: 3, maxAgeMs: 1e9 });
    for (const id of ['a', 'b', 'c']) d.onSettled(k(id), accepted, 0);
    for (let i = 1; i <= 5000; i++) expect(offer(d, ['a', 'b'][i % 2], 't', i).action).toBe('settle');
    expect(d.rememberedCount).toBe(3);
    d.onSettled(k('x'), accepted, 5001); // evicts c, touched least recently
    expect(d.rememberedCount).toBe(3);
    expect(offer(d, 'c', 't', 5002).action).toBe('deliver');
    d.onSettled(k('y'), accepted, 5003); // c is pending, not remembered: evicts b (touched before a)
    expect(offer(d, 'a', 't', 5004).action).toBe('settle');
    expect(offer(d, 'b', 't', 5004).action).toBe('deliver');
  });

  it('forgets by age after many refreshes and evictions', () => {
    const d = new ReceiverDedup<string>({ maxIds: 10, maxAgeMs: 100 });
    for (let i = 0; i < 3000; i++) d.onSettled(k(`m${i}`), accepted, i);
    expect(d.rememberedCount).toBe(10);
    expect(offer(d, 'm2989', 't', 3000).action).toBe('deliver'); // evicted by count
    expect(offer(d, 'm2999', 't', 3000).action).toBe('settle');
    expect(offer(d, 'm2995', 't', 3094).action).toBe('settle'); // age 99: refreshed
    expect(offer(d, 'm2998', 't', 3099).action).toBe('deliver'); // age 101: forgotten
    expect(d.rememberedCount).toBe(2); // m2999 (touched at 3000) and m2995 (3094)
  });

  it('property: decides as a plain model of the rules does, with eviction by count and by age', () => {
    /** the rules, kept as simply as possible: pending ids, and remembered ones oldest touch first */
    class Model {
      pending = new Map<string, { token: number; handedOut: boolean }>();
      remembered: Array<{ key: string; outcome: string; at: number }> = [];
      constructor(
        readonly maxIds: number,
        readonly maxAgeMs: number,
      ) {}
      prune(now: number) {
        this.remembered = this.remembered.filter((e) => now - e.at < this.maxAgeMs);
        while (this.remembered.length > this.maxIds) this.remembered.shift();
      }
      onDelivery(key: string, token: number, now: number): string {
        this.prune(now);
        const p = this.pending.get(key);
        if (p) return `bind:${p.token}:${p.handedOut}`;
        const i = this.remembered.findIndex((e) => e.key === key);
        if (i >= 0) {
          const [e] = this.remembered.splice(i, 1);
          this.remembered.push({ key, outcome: e!.outcome, at: now });
          return `settle:${e!.outcome}`;
        }
        this.pending.set(key, { token, handedOut: false });
        return 'deliver';
      }
      onSettled(key: string, outcome: string, now: number) {
        this.pending.delete(key);
        this.remembered = this.remembered.filter((e) => e.key !== key);
        if (outcome === 'accepted' || outcome === 'rejected') this.remembered.push({ key, outcome, at: now });
        this.prune(now);
      }
    }
    type Op =
      | { k: 'arrive'; id: number; dt: number }
      | { k: 'handout'; dt: number }
      | { k: 'settle'; how: 'accepted' | 'rejected' | 'released'; dt: number }
      | { k: 'lost' };
    const dt = fc.integer({ min: 0, max: 3 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ k: fc.constant('arrive' as const), id: fc.integer({ min: 0, max: 5 }), dt }),
      fc.record({ k: fc.constant('handout' as const), dt }),
      fc.record({
        k: fc.constant('settle' as const),
        how: fc.constantFrom('accepted' as const, 'rejected' as const, 'released' as const),
        dt,
      }),
      fc.constant({ k: 'lost' as const }),
    );
    const histories = fc.array(op, { maxLength: 150, size: 'max' });
    expectReachesLength(histories, 150);
    fc.assert(
      fc.property(histories, (ops: Op[]) => {
        const d = new ReceiverDedup<number>({ maxIds: 3, maxAgeMs: 12 });
        const m = new Model(3, 12);
        // ids with the key and row admit gave, passed back as the Receiver does
        const buffer: Array<[number, Slot]> = [];
        const app: Array<[number, Slot]> = [];
        let now = 0;
        let token = 0;
        for (const o of ops) {
          if (o.k !== 'lost') now += o.dt;
          if (o.k === 'arrive') {
            const t = token++;
            const r = offer(d, `m${o.id}`, t, now);
            const got =
              r.action === 'bind'
                ? `bind:${r.pending}:${r.handedOut}`
                : r.action === 'settle'
                  ? `settle:${r.outcome.type}`
                  : 'deliver';
            expect(got).toBe(m.onDelivery(`m${o.id}`, t, now));
            if (r.action === 'deliver') buffer.push([o.id, r]);
          } else if (o.k === 'handout' && buffer.length > 0) {
            const [id, slot] = buffer.shift()!;
            d.onHandedOut(slot.key, 0, slot.row);
            m.pending.get(`m${id}`)!.handedOut = true;
            app.push([id, slot]);
          } else if (o.k === 'settle' && app.length > 0) {
            const [id, slot] = app.shift()!;
            d.onSettled(slot.key, { type: o.how }, now, slot.row);
            m.onSettled(`m${id}`, o.how, now);
          } else if (o.k === 'lost') {
            d.connectionLost();
            for (const [key, p] of m.pending) if (!p.handedOut) m.pending.delete(key);
            buffer.length = 0;
          }
          expect(d.pendingCount).toBe(m.pending.size);
        }
        // remembered ids agree once both forgot what has aged out by now
        m.prune(now);
        d.prune(now);
        expect(d.rememberedCount).toBe(m.remembered.length);
      }),
      { numRuns: 300 },
    );
  });

  it('property: within the window an id is never handed out twice unless released/modified in between', () => {
    type Ev =
      | { k: 'arrive'; id: number }
      | { k: 'handout' }
      | { k: 'settle'; how: 'accepted' | 'rejected' | 'released' | 'modified' }
      | { k: 'lost' };
    const ev = fc.oneof(
      fc.record({ k: fc.constant('arrive' as const), id: fc.integer({ min: 0, max: 6 }) }),
      fc.constant({ k: 'handout' as const }),
      fc.record({
        k: fc.constant('settle' as const),
        how: fc.constantFrom(
          'accepted' as const,
          'rejected' as const,
          'released' as const,
          'modified' as const,
        ),
      }),
      fc.constant({ k: 'lost' as const }),
    );
    const histories = fc.array(ev, { maxLength: 120, size: 'max' });
    expectReachesLength(histories, 120);
    fc.assert(
      fc.property(histories, (events: Ev[]) => {
        // window large enough that nothing expires in this run
        const d = new ReceiverDedup<number>({ maxIds: 1000, maxAgeMs: 1e9 });
        const buffer: number[] = [];
        const app: number[] = []; // handed out, unsettled
        /** ids handed out and not since released/modified: must never be handed out again */
        const final = new Set<number>();
        const live = new Set<number>();
        let now = 0;
        for (const e of events) {
          now++;
          if (e.k === 'arrive') {
            const r = offer(d, `m${e.id}`, e.id, now);
            if (r.action === 'deliver') buffer.push(e.id);
            else if (r.action === 'bind') expect(r.pending).toBe(e.id);
          } else if (e.k === 'handout' && buffer.length > 0) {
            const id = buffer.shift()!;
            expect(final.has(id)).toBe(false);
            expect(live.has(id)).toBe(false);
            d.onHandedOut(k(`m${id}`), id);
            live.add(id);
            app.push(id);
          } else if (e.k === 'settle' && app.length > 0) {
            const id = app.shift()!;
            live.delete(id);
            d.onSettled(k(`m${id}`), { type: e.how }, now);
            if (e.how === 'accepted' || e.how === 'rejected') final.add(id);
          } else if (e.k === 'lost') {
            d.connectionLost();
            buffer.length = 0;
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
