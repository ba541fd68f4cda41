import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdmissionGate } from '../../src/failover/admission.js';
import { ensureMessageId } from '../../src/failover/message-id.js';
import { ReplayJournal } from '../../src/failover/replay-journal.js';
import { expectReachesLength } from '../support/property-size.js';

const bytes = (n: number) => new Uint8Array(n);
const accepted = { type: 'accepted' } as const;

function add<C>(j: ReplayJournal<C>, id: string, size: number, ctx: C) {
  const r = j.tryReserve(size);
  if (!r.ok) throw new Error(`no room: ${r.reason}`);
  return j.append(r.reservation, id, bytes(size), ctx);
}

describe('ensureMessageId', () => {
  it('keeps an id the application set and never mutates the caller', () => {
    const msg = { body: 'x', messageId: 42 };
    const r = ensureMessageId(msg);
    expect(r.messageId).toBe(42);
    expect(r.message).not.toBe(msg);
    expect(r.message).toEqual(msg);
  });

  it('assigns a fresh UUID on a copy when there is none', () => {
    const msg: { body: string; messageId?: string } = { body: 'x' };
    const a = ensureMessageId(msg);
    const b = ensureMessageId(msg);
    expect(msg).toEqual({ body: 'x' });
    expect(a.message.messageId).toBe(a.messageId);
    expect(String(a.messageId)).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.messageId).not.toBe(b.messageId);
    expect(ensureMessageId({ messageId: null }, () => 'gen').messageId).toBe('gen');
  });
});

describe('ReplayJournal', () => {
  it('walks queued -> sent -> in-doubt -> re-sent -> settled', () => {
    const j = new ReplayJournal<string>();
    const e1 = add(j, 'm1', 10, 'c1');
    const e2 = add(j, 'm2', 20, 'c2');
    const e3 = add(j, 'm3', 30, 'c3');
    expect(e1.state).toBe('queued');
    j.markSent(e1.seq);
    j.markSent(e2.seq);
    expect(j.counts()).toEqual({ queued: 1, sent: 2, 'in-doubt': 0 });
    expect(j.settle(e2.seq, accepted)?.entry.outcome).toEqual(accepted);
    const lost = j.connectionLost();
    expect(lost.inDoubt).toBe(1);
    expect(lost.entries.map((e) => e.messageId)).toEqual(['m1']);
    const plan = j.replayPlan();
    expect(plan.entries.map((e) => e.messageId)).toEqual(['m1', 'm3']);
    expect(plan.resent).toBe(1);
    expect(j.get(e1.seq)?.state).toBe('in-doubt');
    for (const e of plan.entries) j.markSent(e.seq);
    expect(j.get(e1.seq)?.writes).toBe(2);
    expect(j.get(e3.seq)?.writes).toBe(1);
    expect(j.settle(e3.seq, accepted)?.entry.state).toBe('settled');
    expect(j.size).toBe(1);
    expect(j.bytes).toBe(10);
    expect(j.settle(e2.seq, accepted)).toBeUndefined(); // late duplicate settlement
  });

  it('abandon reports whether the message may have arrived', () => {
    const j = new ReplayJournal();
    const never = add(j, 'a', 1, null);
    const written = add(j, 'b', 1, null);
    j.markSent(written.seq);
    expect(j.abandon(never.seq)?.inDoubt).toBe(false);
    expect(j.abandon(written.seq)?.inDoubt).toBe(true);
    expect(j.size).toBe(0);
    expect(j.abandon(written.seq)).toBeUndefined();
  });

  it('bounds by messages and bytes: reject mode', () => {
    const j = new ReplayJournal({ maxMessages: 2, maxBytes: 100, onFull: 'reject' });
    expect(j.admit(200, 'w')).toEqual({ kind: 'rejected', reason: 'too-large' });
    const a = j.admit(60, 'w');
    expect(a.kind).toBe('reserved');
    expect(j.canAccept(50)).toBe(false); // bytes
    expect(j.admit(50, 'w')).toEqual({ kind: 'rejected', reason: 'full' });
    expect(j.admit(40, 'w').kind).toBe('reserved');
    expect(j.canAccept(1)).toBe(false); // messages
  });

  it('bounds: wait mode grants waiters FIFO as room comes back, without overtaking', () => {
    const j = new ReplayJournal<null, string>({ maxMessages: 10, maxBytes: 100 });
    const first = add(j, 'a', 70, null);
    const second = add(j, 'b', 20, null);
    expect(j.admit(50, 'w1')).toEqual({ kind: 'waiting' });
    expect(j.admit(5, 'w2')).toEqual({ kind: 'waiting' }); // would fit, but w1 is ahead
    expect(j.waiting).toBe(2);
    expect(j.settle(second.seq, accepted)?.granted).toEqual([]);
    const granted = j.settle(first.seq, accepted)!.granted;
    expect(granted.map((g) => g.waiter)).toEqual(['w1', 'w2']);
    expect(j.bytes).toBe(55);
    // granted reservations are live: they can be appended, or released if the send was aborted
    j.append(granted[0]!.reservation, 'c', bytes(50), null);
    expect(j.release(granted[1]!.reservation)).toEqual([]);
    expect(j.bytes).toBe(50);
  });

  it('cancelling the head waiter lets the next through', () => {
    const j = new ReplayJournal<null, string>({ maxMessages: 10, maxBytes: 10 });
    add(j, 'a', 8, null);
    j.admit(5, 'big');
    j.admit(2, 'small');
    expect(j.cancelWait('big').map((g) => g.waiter)).toEqual(['small']);
  });

  it('refuses to append without a live, unused reservation', () => {
    const j = new ReplayJournal();
    const r = j.tryReserve(1);
    if (!r.ok) throw new Error('unexpected');
    j.append(r.reservation, 'x', bytes(1), null);
    expect(() => j.append(r.reservation, 'y', bytes(1), null)).toThrow();
    expect(j.release(r.reservation)).toEqual([]); // backing an entry: not released
    expect(j.size).toBe(1);
  });

  it('property: replay order == original order of unsettled entries; accounting stays exact', () => {
    type Cmd =
      | { k: 'send'; size: number }
      | { k: 'write' }
      | { k: 'settle'; pick: number }
      | { k: 'abandon'; pick: number }
      | { k: 'lost' };
    const cmd = fc.oneof(
      fc.record({ k: fc.constant('send' as const), size: fc.integer({ min: 1, max: 50 }) }),
      fc.constant({ k: 'write' as const }),
      fc.record({ k: fc.constant('settle' as const), pick: fc.nat() }),
      fc.record({ k: fc.constant('abandon' as const), pick: fc.nat() }),
      fc.constant({ k: 'lost' as const }),
    );
    const histories = fc.array(cmd, { maxLength: 80, size: 'max' });
    expectReachesLength(histories, 80);
    fc.assert(
      fc.property(histories, (cmds: Cmd[]) => {
        const j = new ReplayJournal<number>({ maxMessages: 20, maxBytes: 400, onFull: 'reject' });
        const model: { id: number; size: number; written: boolean; inDoubt: boolean }[] = [];
        let n = 0;
        for (const c of cmds) {
          if (c.k === 'send') {
            const r = j.admit(c.size, null);
            const fits = model.length + 1 <= 20 && model.reduce((s, m) => s + m.size, 0) + c.size <= 400;
            expect(r.kind === 'reserved').toBe(fits);
            if (r.kind === 'reserved') {
              const id = n++;
              j.append(r.reservation, `m${id}`, bytes(c.size), id);
              model.push({ id, size: c.size, written: false, inDoubt: false });
            }
          } else if (c.k === 'write') {
            const next = j.entries().find((e) => e.state !== 'sent');
            if (next) {
              j.markSent(next.seq);
              const m = model.find((x) => x.id === next.context)!;
              m.written = true;
              m.inDoubt = false;
            }
          } else if (c.k === 'lost') {
            j.connectionLost();
            for (const m of model) if (m.written) m.inDoubt = true;
          } else if (model.length > 0) {
            const i = c.pick % model.length;
            const entry = j.entries().find((e) => e.context === model[i]!.id)!;
            if (c.k === 'settle') j.settle(entry.seq, accepted);
            else {
              const r = j.abandon(entry.seq)!;
              expect(r.inDoubt).toBe(model[i]!.written);
            }
            model.splice(i, 1);
          }
          const expectedReplay = model.filter((m) => !m.written || m.inDoubt).map((m) => m.id);
          expect(j.replayOrder().map((e) => e.context)).toEqual(expectedReplay);
          expect(j.size).toBe(model.length);
          expect(j.bytes).toBe(model.reduce((s, m) => s + m.size, 0));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('AdmissionGate', () => {
  it('property: FIFO grants, never over the bound, every waiter granted once room is all back', () => {
    const requests = fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 40, size: 'max' });
    expectReachesLength(requests, 40);
    fc.assert(
      fc.property(requests, (sizes) => {
        const gate = new AdmissionGate<number>({ maxMessages: 5, maxBytes: 60 });
        const held: { id: number; size: number }[] = [];
        const grantedOrder: number[] = [];
        const waiting: number[] = [];
        sizes.forEach((size, i) => {
          const r = gate.tryReserve(size);
          if (r.ok) held.push(r.reservation);
          else {
            gate.enqueue(size, i);
            waiting.push(i);
          }
          expect(gate.usedBytes).toBeLessThanOrEqual(60);
          expect(gate.usedMessages).toBeLessThanOrEqual(5);
        });
        while (held.length > 0) {
          for (const g of gate.release(held.shift()!)) {
            grantedOrder.push(g.waiter);
            held.push(g.reservation);
          }
          expect(gate.usedBytes).toBeLessThanOrEqual(60);
          expect(gate.usedMessages).toBeLessThanOrEqual(5);
        }
        expect(grantedOrder).toEqual(waiting);
      }),
    );
  });
});
