/**
 * The broker's connection handler in process, against a client engine through memory: the
 * commit point (accepted only once durable), no settlement on an unknown outcome, confirmed
 * accepts in rcv-settle-mode second, the header-only rewrite.
 */
import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import type { ResultOf } from '../../../src/cluster-broker/core/results.js';
import {
  type EventCommitter,
  LocalBackend,
  memoryBackend,
} from '../../../src/cluster-broker/server/local-backend.js';
import { decodeMessage, splitMessage } from '../../../src/codec/index.js';
import { ACCEPTED, type OutgoingDelivery } from '../../../src/protocol/index.js';
import { InProcessPair, msg, serverContext } from './in-process.js';

/** A committer whose durability the test releases by hand (or fails). */
class ManualCommitter implements EventCommitter {
  readonly state = new BrokerState();
  readonly waiting: Array<{ event: BrokerEvent; resolve: () => void; reject: (e: Error) => void }> = [];
  commit<E extends BrokerEvent>(event: E): { result: ResultOf<E>; durable: Promise<void> } {
    const result = this.state.apply(event);
    const durable = new Promise<void>((resolve, reject) => this.waiting.push({ event, resolve, reject }));
    durable.catch(() => {});
    return { result, durable };
  }
  release(type?: BrokerEvent['type']): number {
    let n = 0;
    for (const w of this.waiting.splice(0)) {
      if (type === undefined || w.event.type === type) {
        w.resolve();
        n++;
      } else this.waiting.push(w);
    }
    return n;
  }
  fail(): void {
    for (const w of this.waiting.splice(0)) w.reject(new Error('disk on fire'));
  }
  flush = () => Promise.resolve();
  close = () => Promise.resolve();
}

/** An open pair on `context` with a sender to queue `q` attached (the usual start of a test). */
async function pairWithSender(
  context: ReturnType<typeof serverContext>,
  senderOptions: { desiredCapabilities?: string[] } = {},
  containerId?: string,
) {
  const pair = new InProcessPair(context, containerId);
  await pair.open();
  const sender = pair.session.attachSender({ name: 'p', target: { address: 'q' }, ...senderOptions });
  await pair.settle();
  return { pair, sender };
}

describe('publisher: the commit point', () => {
  it('settles accepted only once the enqueue is durable', async () => {
    const committer = new ManualCommitter();
    const backend = new LocalBackend(committer);
    const { pair, sender } = await pairWithSender(serverContext(backend));
    const d: OutgoingDelivery = sender.send(new Uint8Array([1]), msg({ body: 'hello', messageId: 'm1' }));
    await pair.settle();
    expect(d.remoteState).toBeUndefined();
    expect(backend.state.queueInfo('q')?.depth).toBe(1); // applied, not yet durable
    expect(committer.release('enqueue')).toBe(1);
    await pair.settle();
    expect(d.remoteState).toEqual(ACCEPTED);
    await backend.close();
  });

  it('never settles on an unknown outcome: the connection is closed with amqp:connection:forced', async () => {
    const committer = new ManualCommitter();
    const backend = new LocalBackend(committer);
    const { pair, sender } = await pairWithSender(serverContext(backend));
    const d = sender.send(new Uint8Array([1]), msg({ body: 'doomed' }));
    await pair.settle();
    committer.fail();
    await pair.settle();
    expect(d.remoteState).toBeUndefined();
    const close = pair.of('remote-close')[0];
    expect(close?.error?.condition).toBe('amqp:connection:forced');
    expect(pair.brokerEnded).toBe(true);
    await backend.close().catch(() => {});
  });

  it('a sender desiring quorate:dedup: a duplicate message-id is settled accepted and not enqueued again', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend), {
      desiredCapabilities: ['quorate:dedup'],
    });
    expect(sender.remote?.offeredCapabilities).toEqual(['quorate:dedup']);
    const a = sender.send(new Uint8Array([1]), msg({ body: 'one', messageId: 'same' }));
    const b = sender.send(new Uint8Array([2]), msg({ body: 'two', messageId: 'same' }));
    await pair.settle();
    expect(a.remoteState).toEqual(ACCEPTED);
    expect(b.remoteState).toEqual(ACCEPTED);
    expect(backend.state.queueInfo('q')?.depth).toBe(1);
    await backend.close();
  });

  it('a sender not asking for dedup gets every message enqueued, re-used message-ids included', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend));
    expect(sender.remote?.offeredCapabilities).toBeUndefined();
    const a = sender.send(new Uint8Array([1]), msg({ body: 'one', messageId: 'same' }));
    const b = sender.send(new Uint8Array([2]), msg({ body: 'two', messageId: 'same' }));
    await pair.settle();
    expect(a.remoteState).toEqual(ACCEPTED);
    expect(b.remoteState).toEqual(ACCEPTED);
    expect(backend.state.queueInfo('q')?.depth).toBe(2);
    await backend.close();
  });

  it('with the dedup option (--dedup) every sender is deduplicated', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend, { dedup: true }));
    sender.send(new Uint8Array([1]), msg({ body: 'one', messageId: 'same' }));
    sender.send(new Uint8Array([2]), msg({ body: 'two', messageId: 'same' }));
    await pair.settle();
    expect(backend.state.queueInfo('q')?.depth).toBe(1);
    await backend.close();
  });

  it('rejects an undecodable message with amqp:decode-error', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend));
    const d = sender.send(new Uint8Array([1]), new Uint8Array([0x00, 0x53, 0x70, 0xff]));
    await pair.settle();
    expect(d.remoteState).toMatchObject({ type: 'rejected', error: { condition: 'amqp:decode-error' } });
    await backend.close();
  });
});

describe('consumer', () => {
  it('rcv-settle-mode second: our settlement follows the durable settle event', async () => {
    const committer = new ManualCommitter();
    const backend = new LocalBackend(committer);
    const { pair, sender } = await pairWithSender(serverContext(backend));
    sender.send(new Uint8Array([1]), msg({ body: 'x', messageId: 'x1', durable: true, priority: 3 }));
    await pair.settle();
    committer.release();
    const receiver = pair.session.attachReceiver({ name: 'c', source: { address: 'q' }, rcvSettleMode: 1 });
    receiver.flow(10);
    await pair.settle();
    committer.release();
    const [m] = pair.of('message');
    expect(m).toBeDefined();
    const got = decodeMessage(m!.delivery.payload);
    expect(got).toMatchObject({
      body: 'x',
      messageId: 'x1',
      durable: true,
      priority: 3,
      firstAcquirer: true,
    });
    m!.delivery.accept();
    await pair.settle();
    expect(m!.delivery.settled).toBe(false); // the broker has not settled: the settle is not durable yet
    expect(committer.release('settle')).toBe(1);
    await pair.settle();
    expect(m!.delivery.settled).toBe(true);
    expect(backend.state.queueInfo('q')?.depth).toBe(0);
    await backend.close();
  });

  it('rewrites only the header: every byte after it is the stored bytes', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend));
    const original = msg({
      durable: true,
      messageAnnotations: { 'x-opt-a': 1 },
      messageId: 'h1',
      applicationProperties: { k: 'v' },
      body: new Uint8Array([9, 8, 7]),
      footer: { 'x-f': 'end' },
    });
    sender.send(new Uint8Array([1]), original);
    await pair.settle();
    const receiver = pair.session.attachReceiver({ name: 'c', source: { address: 'q' } });
    receiver.flow(1);
    await pair.settle();
    const first = pair.of('message')[0]!.delivery;
    first.modify({ deliveryFailed: true });
    receiver.flow(1);
    await pair.settle();
    const second = pair.of('message')[1]!.delivery;
    const rest = (b: Uint8Array) => Buffer.from(b.subarray(splitMessage(b).headerEnd));
    expect(rest(second.payload).equals(rest(original))).toBe(true);
    expect(splitMessage(second.payload).header).toEqual({ durable: true, deliveryCount: 1 });
    await backend.close();
  });

  it('a connection that drops gives its acquired messages back', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend));
    for (let i = 0; i < 3; i++) sender.send(new Uint8Array([i]), msg({ body: i }));
    await pair.settle();
    const receiver = pair.session.attachReceiver({ name: 'c', source: { address: 'q' } });
    receiver.flow(3);
    await pair.settle();
    expect(pair.of('message')).toHaveLength(3);
    expect(backend.state.queueInfo('q')?.acquired).toBe(3);
    pair.broker.socketClosed();
    await pair.settle();
    expect(backend.state.queueInfo('q')).toMatchObject({ acquired: 0, available: 3 });
    await backend.close();
  });

  it('stops acquiring while the socket is congested, resumes when it drains', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend));
    for (let i = 0; i < 5; i++) sender.send(new Uint8Array([i]), msg({ body: i }));
    await pair.settle();
    pair.backlog = 64 * 1024 * 1024;
    const receiver = pair.session.attachReceiver({ name: 'c', source: { address: 'q' } });
    receiver.flow(5);
    await pair.settle();
    expect(pair.of('message')).toHaveLength(0);
    expect(backend.state.queueInfo('q')?.acquired).toBe(0);
    pair.backlog = 0;
    pair.broker.writable();
    await pair.settle();
    expect(pair.of('message')).toHaveLength(5);
    await backend.close();
  });

  it('takes over messages a predecessor elsewhere still holds under the same container-id and name', async () => {
    const backend = memoryBackend();
    const { pair, sender } = await pairWithSender(serverContext(backend), {}, 'client-x');
    for (let i = 0; i < 2; i++) sender.send(new Uint8Array([i]), msg({ body: i }));
    await pair.settle();
    // a half-open predecessor on another member acquired both under the link's identity
    await backend.submit({ type: 'acquire', leaderTime: 1, queue: 'q', consumer: 'client-x/c', max: 2 });
    const receiver = pair.session.attachReceiver({ name: 'c', source: { address: 'q' } });
    receiver.flow(2);
    await pair.settle();
    expect(pair.of('message').map((e) => decodeMessage(e.delivery.payload).body)).toEqual([0, 1]);
    await backend.close();
  });
});
