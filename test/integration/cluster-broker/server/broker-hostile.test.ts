/**
 * Hostile input over real TCP: each case gets the right condition at the narrowest scope, and a
 * well-behaved rhea connection on the same broker keeps working throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, startBroker } from '../../../../src/broker.js';
import { encodeAmqpFrame, encodeMessage, encodeProtocolHeader } from '../../../../src/codec/index.js';
import { RawPeer } from '../../../cluster-broker/server/raw-client.js';
import {
  closeConnection,
  connect,
  type RheaConnection,
  sendAll,
  TestReceiver,
} from '../../../cluster-broker/server/rhea-client.js';

let broker: BrokerHandle;
let good: RheaConnection;
let checks = 0;

beforeAll(async () => {
  broker = await startBroker({ port: 0, idleTimeoutMs: 600, handshakeTimeoutMs: 600 });
  good = await connect({ port: broker.port });
});

afterAll(async () => {
  await closeConnection(good);
  await broker.stop();
});

/** The well-behaved client still gets its messages through. */
async function goodStillWorks(): Promise<void> {
  const q = `good-${++checks}`;
  expect((await sendAll(good, q, [{ body: q }]))[0]!.state).toBe('accepted');
  const r = new TestReceiver(good, q);
  const [m] = await r.next(1);
  expect(m!.message.body).toBe(q);
  m!.delivery.accept();
  r.link.close();
}

const closeWith = (condition: string) => (s: { type?: string; error?: { condition: string } }) =>
  s.type === 'close' && s.error?.condition === condition;

describe('hostile input', () => {
  it('garbage after a valid header and Open: framing/decode error, connection closed', async () => {
    const p = await RawPeer.connect(broker.port);
    await p.open();
    p.write(new Uint8Array([0, 0, 0, 12, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]));
    const close = await p.until((s) => s.type === 'close', 5000);
    expect(['amqp:decode-error', 'amqp:connection:framing-error']).toContain(close.error?.condition);
    await p.untilEnded(5000);
    await goodStillWorks();
  });

  it('random bytes instead of a protocol header: answered with our header, then closed', async () => {
    const p = await RawPeer.connect(broker.port);
    p.write(new TextEncoder().encode('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await p.untilEnded(5000);
    expect(p.seen[0]?.kind).toBe('header');
    await goodStillWorks();
  });

  it('an oversized frame: amqp:connection:framing-error', async () => {
    const p = await RawPeer.connect(broker.port);
    await p.open();
    const head = new Uint8Array(8);
    new DataView(head.buffer).setUint32(0, 64 * 1024 * 1024);
    head[4] = 2;
    p.write(head);
    await p.until(closeWith('amqp:connection:framing-error'), 5000);
    await p.untilEnded(5000);
    await goodStillWorks();
  });

  it('attach before begin: the connection is closed with an error', async () => {
    const p = await RawPeer.connect(broker.port);
    await p.open();
    p.frame(3, { type: 'attach', body: { name: 'x', handle: 0, role: false, target: { address: 'q' } } });
    const close = await p.until((s) => s.type === 'close', 5000);
    expect(close.error?.condition).toBe('amqp:illegal-state');
    await goodStillWorks();
  });

  it('transfer on an unattached handle: the session ends with amqp:session:unattached-handle', async () => {
    const p = await RawPeer.connect(broker.port);
    await p.open();
    p.frame(0, { type: 'begin', body: { nextOutgoingId: 0, incomingWindow: 100, outgoingWindow: 100 } });
    await p.until((s) => s.type === 'begin', 5000);
    p.frame(
      0,
      { type: 'transfer', body: { handle: 7, deliveryId: 0, deliveryTag: new Uint8Array([1]) } },
      new Uint8Array([0x00, 0x53, 0x77, 0x40]),
    );
    const end = await p.until((s) => s.type === 'end', 5000);
    expect(end.error?.condition).toBe('amqp:session:unattached-handle');
    // only the session: the connection is still open and can begin another one
    p.frame(1, { type: 'begin', body: { nextOutgoingId: 0, incomingWindow: 100, outgoingWindow: 100 } });
    await p.until(
      (s) =>
        s.type === 'begin' &&
        s.channel !== undefined &&
        p.seen.filter((x) => x.type === 'begin').length === 2,
      5000,
    );
    p.destroy();
    await goodStillWorks();
  });

  it('transfers beyond link-credit: the link is detached with amqp:link:transfer-limit-exceeded', async () => {
    const p = await RawPeer.connect(broker.port);
    await p.open();
    p.frame(0, { type: 'begin', body: { nextOutgoingId: 0, incomingWindow: 5000, outgoingWindow: 5000 } });
    p.frame(0, {
      type: 'attach',
      body: {
        name: 'greedy',
        handle: 0,
        role: false,
        target: { address: 'greedy-q' },
        initialDeliveryCount: 0,
      },
    });
    await p.until((s) => s.type === 'flow', 5000);
    // 1001 pre-settled transfers in one write: the broker granted 1000
    const body = encodeMessage({ body: 'x' });
    const frames: Uint8Array[] = [];
    for (let i = 0; i < 1001; i++) {
      frames.push(
        encodeAmqpFrame(
          0,
          {
            type: 'transfer',
            body: { handle: 0, deliveryId: i, deliveryTag: new Uint8Array([i & 255]), settled: true },
          },
          body,
        ),
      );
    }
    p.write(Buffer.concat(frames));
    const detach = await p.until((s) => s.type === 'detach', 5000);
    expect(detach.error?.condition).toBe('amqp:link:transfer-limit-exceeded');
    expect(p.seen.some((s) => s.type === 'close' || s.type === 'end')).toBe(false);
    p.destroy();
    await goodStillWorks();
  });

  it('a silent peer after Open is closed by the idle timeout', async () => {
    const p = await RawPeer.connect(broker.port);
    await p.open();
    await p.until(closeWith('amqp:resource-limit-exceeded'), 5000);
    await p.untilEnded(5000);
  });

  it('a peer that never finishes the handshake is dropped', async () => {
    const p = await RawPeer.connect(broker.port);
    p.write(encodeProtocolHeader(0).subarray(0, 5));
    await p.untilEnded(5000);
  });

  it('a frame dribbled byte by byte is bounded by the idle timeout', async () => {
    const p = await RawPeer.connect(broker.port);
    await p.open();
    // a 300-byte frame, one byte every 100 ms: each byte would reset a plain idle timer
    const head = new Uint8Array(300);
    new DataView(head.buffer).setUint32(0, 300);
    head[4] = 2;
    let i = 0;
    const timer = setInterval(() => {
      if (i < head.length) p.write(head.subarray(i, ++i));
    }, 100);
    try {
      await p.until(closeWith('amqp:resource-limit-exceeded'), 5000);
      await p.untilEnded(5000);
    } finally {
      clearInterval(timer);
    }
    await goodStillWorks();
  });
});
