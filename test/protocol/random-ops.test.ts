/**
 * Randomized end-to-end runs: random frame sizes, windows, credit grants, message sizes,
 * settlement choices and outcomes, settled in random order, bytes split at random positions.
 * Invariants: every message arrives once, in order, intact; every unsettled send ends with the
 * exact outcome the receiver chose; no protocol error on either side.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryState } from '../../src/codec/index.js';
import type { IncomingDelivery, OutgoingDelivery, ReceiverLink } from '../../src/protocol/index.js';
import { openSession, pair, rng, tag } from './harness.js';

const OUTCOMES: DeliveryState[] = [
  { type: 'accepted' },
  { type: 'released' },
  { type: 'rejected', error: { condition: 'amqp:precondition-failed' } },
  { type: 'modified', deliveryFailed: true },
];

function payload(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i + seed * 13) & 0xff;
  return b;
}

describe('randomized runs', () => {
  for (let seed = 1; seed <= 8; seed++) {
    it(`seed ${seed}`, () => {
      const r = rng(seed * 7919);
      const pick = (n: number) => Math.floor(r() * n);
      const maxFrameSize = 512 + pick(16000);
      const p = pair(
        { incomingWindow: 1 + pick(20) },
        { incomingWindow: 1 + pick(30), open: { containerId: 's', maxFrameSize } },
        seed,
      );
      const second = r() < 0.5;
      let serverLink: ReceiverLink | undefined;
      const pending: IncomingDelivery[] = [];
      const chosen = new Map<number, DeliveryState>();
      const arrived: Uint8Array[] = [];
      p.server.onEvent = (e) => {
        if (e.type === 'attach-request') {
          e.link.accept({ target: e.attach.target, rcvSettleMode: second ? 1 : 0 });
          serverLink = e.link as ReceiverLink;
        } else if (e.type === 'message') {
          arrived.push(e.delivery.payload);
          if (!e.delivery.remoteSettled) pending.push(e.delivery);
        }
      };
      const s = openSession(p);
      const snd = s.attachSender({ name: 'rand', target: { address: 'q' }, sndSettleMode: 2 });
      p.run();
      const sent: OutgoingDelivery[] = [];
      const bodies: Uint8Array[] = [];
      const total = 150 + pick(150);
      let credit = 0;
      for (let step = 0; arrived.length < total || pending.length > 0; step++) {
        if (step > 20000) throw new Error('no progress');
        const a = r();
        if (a < 0.35 && sent.length < total) {
          const big = r() < 0.1;
          const n = big ? pick(maxFrameSize * 4) : pick(300);
          const body = payload(n, sent.length);
          bodies.push(body);
          sent.push(snd.send(tag(sent.length), body, { settled: r() < 0.2 }));
        } else if (a < 0.5 && serverLink && credit < 40) {
          const n = 1 + pick(10);
          credit += n;
          serverLink.addCredit(n);
        } else if (a < 0.75 && pending.length > 0) {
          // settle a random pending delivery with a random outcome
          const i = pick(pending.length);
          const d = pending.splice(i, 1)[0];
          const outcome = OUTCOMES[pick(OUTCOMES.length)];
          chosen.set(d.id, outcome);
          d.disposition(outcome);
        } else {
          p.run();
          credit = serverLink?.credit ?? 0;
        }
      }
      p.run();
      expect(arrived.length).toBe(total);
      for (let i = 0; i < total; i++) {
        expect(Buffer.from(arrived[i]).equals(Buffer.from(bodies[i]))).toBe(true);
      }
      for (const d of sent) {
        expect(d.settled).toBe(true);
        if (!d.presettled) expect(d.remoteState).toEqual(chosen.get(d.id));
      }
      expect(p.client.of('protocol-error')).toEqual([]);
      expect(p.server.of('protocol-error')).toEqual([]);
      expect(s.unsettledOutgoing()).toEqual([]);
    });
  }
});
