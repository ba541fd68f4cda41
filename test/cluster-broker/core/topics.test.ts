import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { decodeEvent, encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { encodeMessage } from '../../../src/codec/message.js';
import { bytes, Driver, text } from './helpers.js';

/** A topic `t` with subscriptions `subs` (declared in this order). */
function withTopic(...subs: string[]): Driver {
  const d = new Driver();
  d.declare('t', { topic: true });
  for (const s of subs) d.declare(s, { subscription: { topic: 't' } });
  return d;
}

describe('BrokerState: topics (docs/topics.md)', () => {
  it('one enqueue to a topic puts the message in every subscription, sharing the bytes', () => {
    const d = withTopic('s1', 's2', 's3');
    const r = d.enqueue('t', 'hello');
    expect(r).toMatchObject({ status: 'enqueued', fannedOut: ['s1', 's2', 's3'] });
    for (const s of ['s1', 's2', 's3']) expect(d.bodies(s)).toEqual(['hello']);
    // one copy: the same place in the same chunk
    const stored = ['s1', 's2', 's3'].map((s) => d.state.queues.get(s)!.available.head!);
    for (const m of stored.slice(1)) {
      expect(m.chunk).toBe(stored[0].chunk);
      expect(m.at).toBe(stored[0].at);
    }
    // the topic itself holds nothing
    expect(d.state.queueInfo('t')).toMatchObject({ depth: 0 });
  });

  it('a snapshot writes a publish once for all its subscriptions; the restored state shares it too', () => {
    const d = withTopic('s1', 's2', 's3');
    const big = 'x'.repeat(10_000);
    d.enqueue('t', big);
    const snap = d.state.snapshot();
    expect(snap.length).toBeLessThan(2 * big.length);
    const restored = BrokerState.fromSnapshot(snap);
    const stored = ['s1', 's2', 's3'].map((s) => restored.queues.get(s)!.available.head!.bytes);
    expect(text(stored[0]!)).toBe(big);
    expect(stored[1]).toBe(stored[0]);
    expect(stored[2]).toBe(stored[0]);
    expect(restored.snapshot()).toEqual(snap);
  });

  it('a subscription declared later gets only later messages', () => {
    const d = withTopic('early');
    d.enqueue('t', 'one');
    d.declare('late', { subscription: { topic: 't' } });
    d.enqueue('t', 'two');
    expect(d.bodies('early')).toEqual(['one', 'two']);
    expect(d.bodies('late')).toEqual(['two']);
  });

  it('a publish to a topic without subscriptions is accepted and kept nowhere', () => {
    const d = withTopic();
    expect(d.enqueue('t', 'x')).toEqual({ type: 'enqueue', status: 'enqueued', seq: 0, fannedOut: [] });
    expect(d.state.listQueues().reduce((n, q) => n + q.depth, 0)).toBe(0);
  });

  it('declaring a subscription creates its topic', () => {
    const d = new Driver();
    d.declare('s', { subscription: { topic: 'news' } });
    expect(d.state.queueInfo('news')?.options.topic).toBe(true);
    d.enqueue('news', 'a');
    expect(d.bodies('s')).toEqual(['a']);
  });

  it('a re-sent publish (same dedup key) reaches each subscription once', () => {
    const d = withTopic('s1', 's2');
    expect(d.enqueue('t', 'a', { dedupKey: 'id:1' }).status).toBe('enqueued');
    expect(d.enqueue('t', 'a', { dedupKey: 'id:1' }).status).toBe('duplicate');
    expect(d.bodies('s1')).toEqual(['a']);
    expect(d.bodies('s2')).toEqual(['a']);
  });

  it('a subscription is a queue: acquire, settle, redelivery count, delete drop it from the topic', () => {
    const d = withTopic('s1', 's2');
    d.enqueue('t', 'a');
    const seq = d.take('s1', 'c/1');
    d.settle('c/1', [seq], { type: 'modified', deliveryFailed: true });
    expect(d.acquire('s1', 'c/1').messages[0]).toMatchObject({ deliveryCount: 1, firstAcquirer: false });
    expect(d.acquire('s2', 'c/2').messages[0]).toMatchObject({ deliveryCount: 0, firstAcquirer: true });
    d.state.apply({ type: 'delete', leaderTime: d.time, queue: 's1' });
    expect(d.enqueue('t', 'b')).toMatchObject({ fannedOut: ['s2'] });
  });

  it('a full subscription refuses the whole publish (no subscription gets it)', () => {
    const d = new Driver();
    d.declare('open', { subscription: { topic: 't' } });
    d.declare('small', { subscription: { topic: 't' }, maxMessages: 1 });
    d.enqueue('t', 'a');
    expect(d.enqueue('t', 'b')).toMatchObject({
      status: 'refused',
      condition: 'amqp:resource-limit-exceeded',
    });
    expect(d.bodies('open')).toEqual(['a']);
  });

  it('a publish in a transaction fans out at commit; limits of subscriptions count', () => {
    const d = withTopic('s1', 's2');
    const r = d.state.apply({
      type: 'commit',
      leaderTime: d.time,
      events: [
        { type: 'enqueue', leaderTime: d.time, queue: 't', message: bytes('x') },
        { type: 'enqueue', leaderTime: d.time, queue: 't', message: bytes('y') },
      ],
    });
    expect(r.status).toBe('committed');
    expect(d.bodies('s1')).toEqual(['x', 'y']);
    expect(d.bodies('s2')).toEqual(['x', 'y']);
  });

  it('TTL applies per subscription message', () => {
    const d = withTopic('s1', 's2');
    d.enqueue('t', 'a', { expiresAt: d.time + 10 });
    d.take('s1', 'c/1');
    d.time += 20;
    expect(d.expire().expired).toHaveLength(1); // s2's copy; s1's is acquired
    expect(d.bodies('s2')).toEqual([]);
  });

  it('a selector is evaluated once per message per subscription, at apply', () => {
    const d = new Driver();
    d.declare('green', { subscription: { topic: 't', selector: "colour = 'green'" } });
    d.declare('all', { subscription: { topic: 't' } });
    const pub = (colour: string) =>
      d.state.apply({
        type: 'enqueue',
        leaderTime: d.time,
        queue: 't',
        message: encodeMessage({ applicationProperties: { colour }, body: colour }),
      });
    expect(pub('red')).toMatchObject({ fannedOut: ['all'] });
    expect(pub('green')).toMatchObject({ fannedOut: ['green', 'all'] });
    expect(d.state.queueInfo('green')?.depth).toBe(1);
    expect(d.state.queues.get('green')!.selector!.evaluations).toBe(2);
  });

  it('snapshots keep topics, subscriptions (with selectors) and their messages', () => {
    const d = withTopic('s1');
    d.declare('s2', { subscription: { topic: 't', selector: 'n > 1' } });
    d.enqueue('t', 'a', { dedupKey: 'k' });
    const restored = BrokerState.fromSnapshot(d.state.snapshot());
    expect(restored.snapshot()).toEqual(d.state.snapshot());
    expect(restored.subscriptionsOf('t')).toEqual(['s1', 's2']);
    expect(
      restored.apply({ type: 'enqueue', leaderTime: d.time, queue: 't', message: bytes('a'), dedupKey: 'k' })
        .status,
    ).toBe('duplicate');
    const r = restored.apply({ type: 'enqueue', leaderTime: d.time, queue: 't', message: bytes('b') });
    expect(r).toMatchObject({ fannedOut: ['s1'] }); // 'b' is not an AMQP message: the selector never matches
    expect(restored.queues.get('s1')!.available.head!.bytes).toEqual(bytes('a'));
    expect(text(restored.queues.get('s1')!.available.head!.next!.bytes)).toBe('b');
  });
});

describe('BrokerState: owner records of temporary queues (docs/topics.md#owner-gone)', () => {
  const temp = { temporary: { owner: 'c/l', policy: 'delete-on-close' as const } };

  it('owner-lost starts the grace period; a delete for that moment applies only while still lost', () => {
    const d = new Driver();
    d.declare('$temp/a', temp);
    d.state.apply({ type: 'owner-attached', leaderTime: d.time, queue: '$temp/a', holder: 'm1@x' });
    d.time = 2_000;
    expect(
      d.state.apply({ type: 'owner-lost', leaderTime: d.time, queue: '$temp/a', holder: 'm1@x' }).changed,
    ).toBe(true);
    expect(d.state.ownedQueues()).toEqual([{ queue: '$temp/a', ownerLostAt: 2_000 }]);
    // the owner re-attached (elsewhere) before the grace period ended: the delete is void
    d.state.apply({ type: 'owner-attached', leaderTime: d.time, queue: '$temp/a', holder: 'm2@y' });
    expect(
      d.state.apply({ type: 'delete', leaderTime: d.time, queue: '$temp/a', ifOwnerLostAt: 2_000 }).deleted,
    ).toBe(false);
    // a late owner-lost from the first holder changes nothing
    expect(
      d.state.apply({ type: 'owner-lost', leaderTime: d.time, queue: '$temp/a', holder: 'm1@x' }).changed,
    ).toBe(false);
    d.time = 3_000;
    d.state.apply({ type: 'owner-lost', leaderTime: d.time, queue: '$temp/a', holder: 'm2@y' });
    expect(
      d.state.apply({ type: 'delete', leaderTime: d.time, queue: '$temp/a', ifOwnerLostAt: 3_000 }).deleted,
    ).toBe(true);
    expect(d.state.hasQueue('$temp/a')).toBe(false);
  });

  it('owner records survive a snapshot; stores without them load as before', () => {
    const d = new Driver();
    d.declare('q');
    const plain = d.state.snapshot();
    d.declare('$temp/a', temp);
    d.declare('$temp/b', temp);
    d.state.apply({ type: 'owner-attached', leaderTime: d.time, queue: '$temp/a', holder: 'local' });
    d.state.apply({ type: 'owner-attached', leaderTime: d.time, queue: '$temp/b', holder: 'local' });
    d.state.apply({ type: 'owner-lost', leaderTime: d.time, queue: '$temp/b', holder: 'local' });
    const restored = BrokerState.fromSnapshot(d.state.snapshot());
    expect(restored.ownedQueues()).toEqual(d.state.ownedQueues());
    expect(
      BrokerState.fromSnapshot(plain)
        .listQueues()
        .map((q) => q.name),
    ).toEqual(['q']);
  });

  it('the new events and options round-trip through the event codec', () => {
    const events: BrokerEvent[] = [
      {
        type: 'declare',
        leaderTime: 1,
        queue: 's',
        options: { subscription: { topic: 't', selector: 'a = 1' }, ...temp },
      },
      { type: 'declare', leaderTime: 1, queue: 't', options: { topic: true, maxMessages: 3 } },
      { type: 'owner-attached', leaderTime: 2, queue: 's', holder: 'm@1' },
      { type: 'owner-lost', leaderTime: 3, queue: 's', holder: 'm@1' },
      { type: 'delete', leaderTime: 4, queue: 's', ifOwnerLostAt: 3 },
      { type: 'delete', leaderTime: 4, queue: 's' },
    ];
    for (const e of events) expect(decodeEvent(encodeEvent(e))).toEqual(e);
  });
});
