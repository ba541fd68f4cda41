import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { symbol } from '../../src/codec/typed.js';
import { ReceiverDedup } from '../../src/failover/receiver-dedup.js';
import { expectReachesLength } from '../support/property-size.js';

const accepted = { type: 'accepted' } as const;
const rejected = { type: 'rejected', error: { condition: 'amqp:internal-error' } } as const;
const released = { type: 'released' } as const;
const modified = { type: 'modified', deliveryFailed: true } as const;

describe('ReceiverDedup', () => {
  it('settles a redelivery of an accepted or rejected message again, without handing it out', () => {
    const d = new ReceiverDedup<string>();
    expect(d.onDelivery('a', 't1', 0)).toEqual({ action: 'deliver', key: 'string:a' });
    d.onHandedOut('a', 't1');
    d.onSettled('a', accepted, 1);
    expect(d.onDelivery('a', 't2', 2)).toEqual({ action: 'settle', key: 'string:a', outcome: accepted });
    d.onDelivery('b', 't3', 3);
    d.onHandedOut('b', 't3');
    d.onSettled('b', rejected, 4);
    expect(d.onDelivery('b', 't4', 5)).toMatchObject({ action: 'settle', outcome: rejected });
  });

  it('hands out again a message that was released or modified', () => {
    const d = new ReceiverDedup<string>();
    for (const outcome of [released, modified]) {
      expect(d.onDelivery('a', 't', 0).action).toBe('deliver');
      d.onHandedOut('a', 't');
      d.onSettled('a', outcome, 1);
    }
    expect(d.onDelivery('a', 't', 2).action).toBe('deliver');
  });

  it('does not remember a transactional accept: after a rollback the redelivery is handed out again', () => {
    const d = new ReceiverDedup<string>();
    d.onDelivery('a', 't1', 0);
    d.onHandedOut('a', 't1');
    d.onSettled('a', { type: 'transactional-state', txnId: Uint8Array.of(1), outcome: accepted }, 1);
    expect(d.onDelivery('a', 't2', 2).action).toBe('deliver');
    // the client reports the plain outcome once the transaction committed
    d.onHandedOut('a', 't2');
    d.onSettled('a', accepted, 3);
    expect(d.onDelivery('a', 't3', 4)).toMatchObject({ action: 'settle', outcome: accepted });
  });

  it('binds a redelivery to the pending (handed out or buffered) one', () => {
    const d = new ReceiverDedup<string>();
    d.onDelivery('a', 'orig', 0);
    expect(d.onDelivery('a', 'copy', 1)).toEqual({
      action: 'bind',
      key: 'string:a',
      pending: 'orig',
      handedOut: false,
    });
    d.onHandedOut('a', 'orig');
    expect(d.onDelivery('a', 'copy2', 2)).toMatchObject({ action: 'bind', pending: 'orig', handedOut: true });
  });

  it('after a connection loss forgets buffered ids but keeps handed-out ones pending', () => {
    const d = new ReceiverDedup<string>();
    d.onDelivery('held', 'h', 0);
    d.onHandedOut('held', 'h');
    d.onDelivery('buffered', 'b', 0);
    expect(d.connectionLost()).toBe(1);
    expect(d.onDelivery('buffered', 'b2', 1).action).toBe('deliver');
    expect(d.onDelivery('held', 'h2', 1)).toMatchObject({ action: 'bind', pending: 'h' });
  });

  it('messages without an id skip dedup', () => {
    const d = new ReceiverDedup<string>();
    expect(d.onDelivery(undefined, 't', 0)).toEqual({ action: 'deliver', key: undefined });
    d.onSettled(undefined, accepted, 0);
    expect(d.onDelivery(null, 't', 0).action).toBe('deliver');
    expect(d.rememberedCount).toBe(0);
  });

  it('keys by type and value', () => {
    const d = new ReceiverDedup<string>();
    d.onDelivery('a', 't', 0);
    d.onSettled('a', accepted, 0);
    expect(d.onDelivery(symbol('a'), 't', 0).action).toBe('deliver');
    expect(d.onDelivery(new Uint8Array([0x61]), 't', 0).action).toBe('deliver');
  });

  it('forgets by age and by count', () => {
    const d = new ReceiverDedup<string>({ maxIds: 2, maxAgeMs: 100 });
    d.onSettled('a', accepted, 0);
    expect(d.onDelivery('a', 't', 99).action).toBe('settle'); // refreshed at 99
    expect(d.onDelivery('a', 't', 198).action).toBe('settle');
    expect(d.onDelivery('a', 't', 298).action).toBe('deliver');
    d.onSettled('x', accepted, 300);
    d.onSettled('y', accepted, 301);
    d.onSettled('z', accepted, 302);
    expect(d.rememberedCount).toBe(2);
    expect(d.onDelivery('x', 't', 303).action).toBe('deliver');
    expect(d.onDelivery('z', 't', 303).action).toBe('settle');
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
            const r = d.onDelivery(`m${e.id}`, e.id, now);
            if (r.action === 'deliver') buffer.push(e.id);
            else if (r.action === 'bind') expect(r.pending).toBe(e.id);
          } else if (e.k === 'handout' && buffer.length > 0) {
            const id = buffer.shift()!;
            expect(final.has(id)).toBe(false);
            expect(live.has(id)).toBe(false);
            d.onHandedOut(`m${id}`, id);
            live.add(id);
            app.push(id);
          } else if (e.k === 'settle' && app.length > 0) {
            const id = app.shift()!;
            live.delete(id);
            d.onSettled(`m${id}`, { type: e.how }, now);
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
