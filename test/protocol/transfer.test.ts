import { describe, expect, it } from 'vitest';
import type { OutgoingDelivery, ReceiverLink } from '../../src/protocol/index.js';
import { autoServer, openSession, pair, receiverPair, tag, text, utf8 } from './harness.js';

function bigPayload(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >>> 8)) & 0xff;
  return b;
}

describe('transfers', () => {
  for (const seed of [1, 2, 3]) {
    it(`1000 messages of mixed sizes, bytes split at random positions (seed ${seed})`, () => {
      const p = pair({}, { incomingWindow: 16, open: { containerId: 's', maxFrameSize: 4096 } }, seed);
      autoServer(p, 50);
      p.server.onEvent = ((prev) => (e) => {
        prev?.(e);
        if (e.type === 'message') {
          e.delivery.accept();
          (e.link as ReceiverLink).addCredit(1);
        }
      })(p.server.onEvent);
      const s = openSession(p);
      const snd = s.attachSender({ name: 'out', target: { address: 'q' } });
      p.run();
      const sizes: number[] = [];
      const ds: OutgoingDelivery[] = [];
      for (let i = 0; i < 1000; i++) {
        const n = (i * 7919) % 9000;
        sizes.push(n);
        ds.push(snd.send(tag(i), bigPayload(n)));
        if (i % 37 === 0) p.run();
      }
      p.run();
      const got = p.server.of('message');
      expect(got.map((m) => m.delivery.payload.length)).toEqual(sizes);
      expect(Buffer.from(got[999].delivery.payload).equals(bigPayload(sizes[999]))).toBe(true);
      expect(ds.every((d) => d.settled && d.remoteState?.type === 'accepted')).toBe(true);
      expect(p.c2s.transfers).toBeGreaterThan(1000); // some were split into several frames
      expect(p.server.of('protocol-error')).toHaveLength(0);
      expect(p.client.of('protocol-error')).toHaveLength(0);
    });
  }

  it('a delivery state given to send() reaches the peer with the message, also split over frames (a transactional send)', () => {
    const p = pair({}, { open: { containerId: 's', maxFrameSize: 512 } }, 4);
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'tx', target: { address: 'q' } });
    p.run();
    const state = { type: 'transactional-state', txnId: Uint8Array.of(7, 7) } as const;
    snd.send(tag(1), bigPayload(2000), { state }); // several frames at 512 bytes
    snd.send(tag(2), utf8('plain'));
    p.run();
    const [inTx, plain] = p.server.of('message');
    expect(inTx.delivery.remoteState).toEqual(state);
    expect(inTx.delivery.payload.length).toBe(2000);
    expect(plain.delivery.remoteState).toBeUndefined();
  });

  it('a 5 MiB message is split to the max frame size and reassembled', () => {
    const p = pair({}, { open: { containerId: 's', maxFrameSize: 65536 } }, 9);
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'big', target: { address: 'q' } });
    p.run();
    const body = bigPayload(5 * 1024 * 1024);
    const d = snd.send(tag(1), body);
    p.run();
    const m = p.server.of('message');
    expect(m).toHaveLength(1);
    expect(m[0].delivery.payload.length).toBe(body.length);
    expect(Buffer.from(m[0].delivery.payload).equals(Buffer.from(body))).toBe(true);
    expect(p.c2s.transfers).toBeGreaterThanOrEqual(Math.ceil(body.length / 65536));
    expect(d.status).toBe('sent');
    expect(d.written).toBe(true);
  });

  it('over the receiver max-message-size: the sender refuses it; a raw overrun detaches (see hostile)', () => {
    const p = pair();
    p.server.onEvent = (e) => {
      if (e.type === 'attach-request') {
        e.link.accept({ target: e.attach.target, maxMessageSize: 1000 });
        (e.link as ReceiverLink).flow(10);
      }
    };
    const s = openSession(p);
    const snd = s.attachSender({ name: 'x', target: { address: 'q' } });
    p.run();
    expect(snd.remoteMaxMessageSize).toBe(1000);
    expect(() => snd.send(tag(1), new Uint8Array(1001))).toThrow(
      expect.objectContaining({ name: 'LinkError', condition: 'amqp:link:message-size-exceeded' }),
    );
    snd.send(tag(2), new Uint8Array(1000));
    p.run();
    expect(p.server.of('message')).toHaveLength(1);
  });

  it('an aborted multi-frame delivery produces no message and the link goes on', () => {
    // a 4-frame session window stalls the sender mid-message so abort() hits a partial delivery
    const p = pair({}, { incomingWindow: 4, open: { containerId: 's', maxFrameSize: 1024 } }, 3);
    autoServer(p);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'ab', target: { address: 'q' } });
    p.run();
    const d = snd.send(tag(1), bigPayload(20000));
    expect(d.status).toBe('partial');
    d.abort();
    const after = snd.send(tag(2), utf8('after'));
    expect(after.status).toBe('queued');
    p.run();
    expect(d.status).toBe('aborted');
    expect(p.server.of('delivery-aborted')).toHaveLength(1);
    const msgs = p.server.of('message');
    expect(msgs.map((m) => text(m.delivery.payload))).toEqual(['after']);
    expect(p.c2s.of('transfer').some((t) => t.aborted)).toBe(true);
  });

  it('queued vs written: deliveries wait for credit and report it', () => {
    const p = pair();
    autoServer(p, 2);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'q', target: { address: 'q' } });
    // before the peer attached: everything queued
    const early = snd.send(tag(0), utf8('early'));
    expect(early.status).toBe('queued');
    expect(early.written).toBe(false);
    p.run();
    expect(early.written).toBe(true);
    const a = snd.send(tag(1), utf8('a'));
    const b = snd.send(tag(2), utf8('b'));
    expect(a.written).toBe(true);
    expect(b.written).toBe(false);
    expect(snd.pendingDeliveries()).toEqual([b]);
    // a queued delivery can be withdrawn (failover moves it elsewhere)
    b.abort();
    expect(b.status).toBe('aborted');
    expect(snd.queued).toBe(0);
    p.run();
    expect(p.server.of('message')).toHaveLength(2);
  });

  it('session window: a small peer window refills and never overflows', () => {
    const p = pair({}, { incomingWindow: 3 });
    autoServer(p, 500);
    const s = openSession(p);
    const snd = s.attachSender({ name: 'w', target: { address: 'q' } });
    p.run();
    for (let i = 0; i < 300; i++) snd.send(tag(i), utf8(`m${i}`));
    expect(snd.queued).toBeGreaterThan(0);
    p.run();
    expect(p.server.of('message')).toHaveLength(300);
    expect(p.server.of('protocol-error')).toHaveLength(0);
  });

  it('server-role sender to a client receiver, pre-settled', () => {
    const p = pair();
    const { sl } = receiverPair(p, { name: 'in', sndSettleMode: 1 }, 5);
    const d = sl.send(tag(1), utf8('x'), { settled: true });
    expect(d.status).toBe('settled');
    p.run();
    const m = p.client.of('message')[0].delivery;
    expect(m.remoteSettled).toBe(true);
    expect(m.settled).toBe(true);
    expect(p.c2s.of('disposition')).toHaveLength(0);
  });
});
