/**
 * holdSettledDispositions: our settled dispositions of received deliveries wait for company (the
 * next frame written anyway), for `count` of them, or for `ms` on the engine clock; nothing else
 * is held, and nothing held is lost at close.
 */
import { describe, expect, it } from 'vitest';
import type { ReceiverLink, SenderLink } from '../../src/protocol/index.js';
import { openSession, type Pair, pair, tag, utf8 } from './harness.js';

const HOLD = { ms: 5, count: 3 };

/** A pair whose client receives from the server's sender link; returns both links. */
function receiving(p: Pair): { rcv: ReceiverLink; snd: () => SenderLink } {
  let snd: SenderLink | undefined;
  p.server.onEvent = (e) => {
    if (e.type === 'attach-request') {
      e.link.accept({ source: e.attach.source, target: e.attach.target, rcvSettleMode: 0 });
      snd = e.link as SenderLink;
    }
  };
  const s = openSession(p);
  const rcv = s.attachReceiver({ name: 'r', source: { address: 'q' }, target: {} });
  rcv.flow(100);
  p.run();
  return { rcv, snd: () => snd! };
}

/** The server sends `n` messages; returns the client's deliveries of them. */
function deliver(p: Pair, snd: SenderLink, from: number, n: number) {
  for (let i = from; i < from + n; i++) snd.send(tag(i), utf8(`m${i}`));
  p.run();
  return p.client
    .of('message')
    .slice(from, from + n)
    .map((e) => e.delivery);
}

const ranges = (p: Pair) =>
  p.c2s.of('disposition').map((d) => [d.first, d.last ?? d.first, d.settled === true]);

describe('held settled dispositions', () => {
  it('are written once `ms` passed on the engine clock, as one range (nextDeadline tells when)', () => {
    const p = pair({ now: 1000, holdSettledDispositions: HOLD });
    const { snd } = receiving(p);
    const ds = deliver(p, snd(), 0, 2);
    for (const d of ds) d.accept();
    p.run();
    expect(ranges(p)).toEqual([]);
    expect(p.client.engine.nextDeadline()).toBe(1000 + HOLD.ms);
    p.client.engine.tick(1000 + HOLD.ms - 1);
    p.run();
    expect(ranges(p)).toEqual([]);
    p.client.engine.tick(1000 + HOLD.ms);
    p.run();
    expect(ranges(p)).toEqual([[0, 1, true]]);
    expect(p.client.engine.nextDeadline()).toBeUndefined();
    expect(snd().session.unsettledOutgoing()).toHaveLength(0);
  });

  it('are written at once when `count` are held, and with any frame written anyway', () => {
    const p = pair({ now: 0, holdSettledDispositions: HOLD });
    const { rcv, snd } = receiving(p);
    for (const d of deliver(p, snd(), 0, 3)) d.accept();
    p.run();
    expect(ranges(p)).toEqual([[0, 2, true]]);
    // one held, then a flow goes out: the disposition rides along in the same output
    deliver(p, snd(), 3, 1)[0]!.accept();
    p.run();
    expect(ranges(p)).toHaveLength(1);
    rcv.flow(50);
    const out = p.client.engine.takeOutput();
    expect(out.length).toBeGreaterThan(0);
    p.c2s.push(Buffer.concat(out));
    expect(ranges(p)).toEqual([
      [0, 2, true],
      [3, 3, true],
    ]);
  });

  it('holds nothing unsettled (rcv-settle-mode second) and nothing when the option is absent', () => {
    const held = pair({ now: 0, holdSettledDispositions: HOLD });
    const a = receiving(held);
    deliver(held, a.snd(), 0, 1)[0]!.disposition({ type: 'accepted' }, false);
    held.run();
    expect(ranges(held)).toEqual([[0, 0, false]]);
    const plain = pair({ now: 0 });
    const b = receiving(plain);
    deliver(plain, b.snd(), 0, 1)[0]!.accept();
    plain.run();
    expect(ranges(plain)).toEqual([[0, 0, true]]);
  });

  it('are written before our Close and before a detach', () => {
    const p = pair({ now: 0, holdSettledDispositions: HOLD });
    const { rcv, snd } = receiving(p);
    deliver(p, snd(), 0, 1)[0]!.accept();
    rcv.detach();
    p.run();
    expect(ranges(p)).toEqual([[0, 0, true]]);
    const q = pair({ now: 0, holdSettledDispositions: HOLD });
    const r = receiving(q);
    deliver(q, r.snd(), 0, 1)[0]!.accept();
    q.client.engine.close();
    q.run();
    expect(ranges(q)).toEqual([[0, 0, true]]);
  });
});
