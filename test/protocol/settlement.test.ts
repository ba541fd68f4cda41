import { describe, expect, it } from 'vitest';
import type { DeliveryState } from '../../src/codec/index.js';
import { DispositionBatcher, type SenderLink } from '../../src/protocol/index.js';
import { autoServer, openSession, pair, receiverPair, tag, utf8 } from './harness.js';

describe('disposition batching', () => {
  const acc: DeliveryState = { type: 'accepted' };
  const rel: DeliveryState = { type: 'released' };
  const rej: DeliveryState = { type: 'rejected', error: { condition: 'amqp:internal-error' } };

  it('coalesces consecutive ids with the same state and settled flag only', () => {
    const b = new DispositionBatcher();
    b.add(true, 1, acc, true);
    b.add(true, 2, { type: 'accepted' }, true);
    b.add(true, 3, rej, true);
    b.add(true, 4, acc, true);
    b.add(true, 5, rel, true);
    b.add(true, 6, rel, true);
    b.add(true, 7, rel, false);
    b.add(true, 9, rel, false);
    expect(b.take()).toEqual([
      { role: true, first: 1, last: 2, settled: true, state: acc },
      { role: true, first: 3, settled: true, state: rej },
      { role: true, first: 4, settled: true, state: acc },
      { role: true, first: 5, last: 6, settled: true, state: rel },
      { role: true, first: 7, state: rel },
      { role: true, first: 9, state: rel },
    ]);
    expect(b.take()).toEqual([]);
  });

  it('sorts out-of-order settlements, keeps roles apart, never merges rejected-with-error', () => {
    const b = new DispositionBatcher();
    const r1: DeliveryState = { type: 'rejected', error: { condition: 'a' } };
    const r2: DeliveryState = { type: 'rejected', error: { condition: 'b' } };
    b.add(true, 3, acc, true);
    b.add(false, 1, undefined, true);
    b.add(true, 1, acc, true);
    b.add(true, 2, acc, true);
    b.add(false, 2, undefined, true);
    b.add(true, 10, r1, true);
    b.add(true, 11, r2, true);
    expect(b.take()).toEqual([
      { role: false, first: 1, last: 2, settled: true },
      { role: true, first: 1, last: 3, settled: true, state: acc },
      { role: true, first: 10, settled: true, state: r1 },
      { role: true, first: 11, settled: true, state: r2 },
    ]);
  });

  it('transactional states coalesce by txn-id and outcome, never across transactions or outcomes', () => {
    const b = new DispositionBatcher();
    const tx = (id: number, outcome?: DeliveryState): DeliveryState => ({
      type: 'transactional-state',
      txnId: new Uint8Array([0, id]),
      ...(outcome ? { outcome } : {}),
    });
    // a fresh state object per delivery, as a broker answers each transactional send
    b.add(true, 1, tx(1, acc), false);
    b.add(true, 2, tx(1, acc), false);
    b.add(true, 3, tx(1, acc), false);
    b.add(true, 4, tx(2, acc), false);
    b.add(true, 5, tx(2, rel), false);
    // rejected with an error: equal only by identity, also inside a transactional state
    b.add(true, 6, tx(2, { ...rej }), false);
    b.add(true, 7, tx(2, { ...rej }), false);
    b.add(true, 8, tx(2), false);
    b.add(true, 9, tx(2), false);
    expect(b.take()).toEqual([
      { role: true, first: 1, last: 3, state: tx(1, acc) },
      { role: true, first: 4, state: tx(2, acc) },
      { role: true, first: 5, state: tx(2, rel) },
      { role: true, first: 6, state: tx(2, rej) },
      { role: true, first: 7, state: tx(2, rej) },
      { role: true, first: 8, last: 9, state: tx(2) },
    ]);
  });

  it('end to end: mixed outcomes in one tick reach the sender per delivery (rhea 3.0.5 merges them)', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'o', target: { address: 'q' } });
    p.run();
    const ds = [0, 1, 2, 3, 4, 5].map((i) => snd.send(tag(i), utf8(`m${i}`)));
    p.run();
    const m = p.server.of('message').map((e) => e.delivery);
    m[0].accept();
    m[1].accept();
    m[2].reject({ condition: 'amqp:precondition-failed', description: 'no' });
    m[3].accept();
    m[4].release();
    m[5].modify({ deliveryFailed: true });
    p.run();
    expect(ds.map((d) => d.remoteState?.type)).toEqual([
      'accepted',
      'accepted',
      'rejected',
      'accepted',
      'released',
      'modified',
    ]);
    const disp = p.s2c.of('disposition');
    expect(disp.map((d) => [d.first, d.last ?? d.first, d.state?.type])).toEqual([
      [0, 1, 'accepted'],
      [2, 2, 'rejected'],
      [3, 3, 'accepted'],
      [4, 4, 'released'],
      [5, 5, 'modified'],
    ]);
  });
});

describe('settlement modes', () => {
  it('snd-settle-mode settled: transfers pre-settled, no dispositions', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'ps', target: { address: 'q' }, sndSettleMode: 1 });
    p.run();
    const d = snd.send(tag(1), utf8('x'));
    expect(d.status).toBe('settled');
    p.run();
    const m = p.server.of('message')[0].delivery;
    expect(m.remoteSettled).toBe(true);
    m.accept(); // no-op: already settled
    p.run();
    expect(p.s2c.of('disposition')).toHaveLength(0);
    expect(p.c2s.of('transfer')[0].settled).toBe(true);
  });

  it('snd-settle-mode unsettled ignores a settled send option', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'u', target: { address: 'q' }, sndSettleMode: 0 });
    p.run();
    const d = snd.send(tag(1), utf8('x'), { settled: true });
    expect(d.status).toBe('sent');
  });

  it('rcv-settle-mode first: one settled disposition per outcome', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'f', target: { address: 'q' }, rcvSettleMode: 0 });
    p.run();
    const d = snd.send(tag(1), utf8('x'));
    p.run();
    p.server.of('message')[0].delivery.accept();
    p.run();
    expect(p.s2c.of('disposition')).toEqual([
      { role: true, first: 0, settled: true, state: { type: 'accepted' } },
    ]);
    expect(p.c2s.of('disposition')).toHaveLength(0);
    expect(d.settled).toBe(true);
    expect(d.remoteSettled).toBe(true);
  });

  it('rcv-settle-mode second, client receiver: outcome unsettled, sender settles, receiver settles', () => {
    const p = pair();
    const { sl } = receiverPair(p, { name: 'r2', rcvSettleMode: 1 }, 1);
    const od = sl.send(tag(7), utf8('x'));
    p.run();
    const d = p.client.of('message')[0].delivery;
    expect(d.settleSecond).toBe(true);
    d.accept();
    expect(d.settled).toBe(false);
    p.run();
    expect(p.c2s.of('disposition')).toEqual([{ role: true, first: 0, state: { type: 'accepted' } }]);
    expect(p.s2c.of('disposition')).toEqual([{ role: false, first: 0, settled: true }]);
    expect(od.settled).toBe(true);
    expect(d.remoteSettled).toBe(true);
    expect(d.settled).toBe(true);
    const upd = p.client.of('delivery-update');
    expect(upd.map((u) => u.delivery)).toEqual([d]);
  });

  it('a session tracks received deliveries until settled, and the sender settles a range of them', () => {
    const p = pair();
    const { s, sl } = receiverPair(p, { name: 'r4', rcvSettleMode: 1 }, 20);
    for (let i = 0; i < 20; i++) sl.send(tag(i), utf8('m'));
    p.run();
    const ds = p.client.of('message').map((e) => e.delivery);
    expect(ds).toHaveLength(20);
    expect(s.unsettledIncoming()).toEqual(ds);
    // first half: settled in mode first at once (settled flag given); second half: outcome
    // unsettled, settled by the sender's range disposition
    for (const d of ds.slice(0, 10)) d.disposition({ type: 'accepted' }, true);
    expect(s.unsettledIncoming()).toEqual(ds.slice(10));
    for (const d of ds.slice(10)) d.accept();
    p.run();
    expect(p.s2c.of('disposition')).toEqual([{ role: false, first: 10, last: 19, settled: true }]);
    for (const d of ds) expect(d.settled).toBe(true);
    expect(s.unsettledIncoming()).toEqual([]);
  });

  it('rcv-settle-mode second asked, first granted (as RabbitMQ answers): accept settles at once', () => {
    const p = pair();
    p.server.onEvent = (e) => {
      if (e.type === 'attach-request') e.link.accept({ source: e.attach.source, rcvSettleMode: 0 });
    };
    const s = openSession(p);
    const rcv = s.attachReceiver({ name: 'r3', source: { address: 'q' }, rcvSettleMode: 1 });
    p.run();
    const sl = p.server.of('attach-request')[0].link as SenderLink;
    rcv.flow(1);
    p.run();
    const od = sl.send(tag(8), utf8('y'));
    p.run();
    const d = p.client.of('message')[0].delivery;
    expect(d.settleSecond).toBe(false);
    d.accept();
    p.run();
    expect(p.c2s.of('disposition')).toEqual([
      { role: true, first: 0, settled: true, state: { type: 'accepted' } },
    ]);
    expect(d.settled).toBe(true);
    expect(od.settled).toBe(true);
  });

  it('rcv-settle-mode second, server receiver: the client sender settles on the outcome', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 's2', target: { address: 'q' }, rcvSettleMode: 1 });
    p.run();
    expect(snd.remote?.rcvSettleMode).toBe(1);
    const d = snd.send(tag(1), utf8('x'));
    p.run();
    const m = p.server.of('message')[0].delivery;
    m.accept();
    p.run();
    expect(d.remoteState?.type).toBe('accepted');
    expect(d.settled).toBe(true);
    expect(m.settled).toBe(true); // confirmed: the broker knows the client settled
    expect(p.server.of('delivery-update')).toHaveLength(1);
  });

  it('autoSettle off: the sender decides when to settle', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'm', target: { address: 'q' } });
    snd.autoSettle = false;
    p.run();
    const d = snd.send(tag(1), utf8('x'));
    p.run();
    p.server.of('message')[0].delivery.disposition({ type: 'accepted' }, false);
    p.run();
    expect(d.remoteState?.type).toBe('accepted');
    expect(d.settled).toBe(false);
    d.settle();
    p.run();
    expect(d.settled).toBe(true);
    expect(p.server.of('message')[0].delivery.settled).toBe(true);
  });
});

describe('credit and drain', () => {
  it('drain: the sender sends what it has and then consumes the rest of the credit', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const rcv = s.attachReceiver({ name: 'd', source: { address: 'q' } });
    p.run();
    const sl = p.server.of('attach-request')[0].link as SenderLink;
    for (let i = 0; i < 3; i++) sl.send(tag(i), utf8(`m${i}`));
    rcv.flow(10, true);
    p.run();
    expect(p.client.of('message')).toHaveLength(3);
    const f = p.client.of('link-flow');
    expect(f.at(-1)?.drained).toBe(true);
    expect(rcv.credit).toBe(0);
    expect(rcv.deliveryCount).toBe(10);
    expect(sl.credit).toBe(0);
    expect(sl.deliveryCount).toBe(10);
    expect(p.server.of('link-credit').some((e) => e.drain)).toBe(true);
    // after a drain, new credit works as usual
    rcv.flow(2);
    p.run();
    sl.send(tag(9), utf8('late'));
    p.run();
    expect(p.client.of('message')).toHaveLength(4);
    expect(rcv.credit).toBe(1);
  });

  it('drain with an event handler that feeds the link before the drain completes', () => {
    const p = pair();
    autoServer(p);
    let fed = 0;
    p.server.onEvent = ((prev) => (e) => {
      prev?.(e);
      // a broker feeds a link when it gets credit; the drain answer waits for takeOutput()
      if (e.type === 'link-credit') for (; fed < 5; fed++) e.link.send(tag(fed), utf8('fed'));
    })(p.server.onEvent);
    const s = openSession(p);
    const rcv = s.attachReceiver({ name: 'd2', source: { address: 'q' } });
    p.run();
    rcv.flow(8, true);
    p.run();
    expect(p.client.of('message').length).toBe(5);
    expect(rcv.credit).toBe(0);
    expect(p.client.of('link-flow').at(-1)?.drained).toBe(true);
  });

  it('a drain held by the link owner (a fetch in flight) is answered after what the fetch brings', () => {
    const p = pair();
    autoServer(p);
    let sl: SenderLink | undefined;
    p.server.onEvent = ((prev) => (e) => {
      prev?.(e);
      // a cluster member answers credit with an acquire through its log: the messages come later
      if (e.type === 'link-credit' && sl === undefined) {
        sl = e.link;
        sl.holdDrain();
      }
    })(p.server.onEvent);
    const s = openSession(p);
    const rcv = s.attachReceiver({ name: 'held', source: { address: 'q' } });
    p.run();
    rcv.flow(10, true);
    p.run();
    // no answer while the fetch is out, and no flow saying drain with credit left either
    expect(p.s2c.of('flow').filter((f) => f.drain)).toEqual([]);
    expect(rcv.credit).toBe(10);
    // an echo asked meanwhile is answered with the state as it is
    rcv.flow(10, true, true);
    p.run();
    expect(p.s2c.of('flow').at(-1)).toMatchObject({ linkCredit: 10, drain: true });
    expect(p.client.of('link-flow').some((e) => e.drained)).toBe(false);
    for (let i = 0; i < 3; i++) sl!.send(tag(i), utf8(`f${i}`));
    sl!.releaseDrain();
    p.run();
    expect(p.client.of('message')).toHaveLength(3);
    expect(p.client.of('link-flow').at(-1)?.drained).toBe(true);
    expect(rcv.credit).toBe(0);
    expect(rcv.deliveryCount).toBe(10);
    expect(sl!.credit).toBe(0);
    // one answer for the drain, after the messages
    expect(p.s2c.of('flow').filter((f) => f.drain && f.linkCredit === 0)).toHaveLength(1);
  });

  it('a drain held while the credit runs out is answered at once (nothing left to fetch for)', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const rcv = s.attachReceiver({ name: 'held-full', source: { address: 'q' } });
    p.run();
    const sl = p.server.of('attach-request')[0].link as SenderLink;
    sl.holdDrain();
    rcv.flow(2, true);
    p.run();
    sl.send(tag(1), utf8('a'));
    sl.send(tag(2), utf8('b'));
    p.run();
    expect(p.client.of('message')).toHaveLength(2);
    expect(p.client.of('link-flow').at(-1)?.drained).toBe(true);
    // the hold's release later finds no drain to answer: no second answer
    const answers = p.s2c.of('flow').length;
    sl.releaseDrain();
    p.run();
    expect(p.s2c.of('flow')).toHaveLength(answers);
  });

  it('echo: a flow with echo gets the sender state back (available)', () => {
    const p = pair();
    autoServer(p);
    const s = openSession(p);
    const rcv = s.attachReceiver({ name: 'e', source: { address: 'q' } });
    p.run();
    const sl = p.server.of('attach-request')[0].link as SenderLink;
    sl.send(tag(1), utf8('a'));
    sl.send(tag(2), utf8('b'));
    rcv.flow(0, false, true);
    p.run();
    const answers = p.s2c.of('flow');
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ handle: 0, linkCredit: 0, available: 2, deliveryCount: 0 });
    expect(p.c2s.of('flow').at(-1)?.echo).toBe(true);
    expect(p.client.of('link-flow')).toHaveLength(1);
    expect(sl.queued).toBe(2);
  });
});
