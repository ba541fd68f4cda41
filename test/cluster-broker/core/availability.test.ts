import { describe, expect, it } from 'vitest';
import { forEachAvailableQueue, queuesHeldBy } from '../../../src/cluster-broker/core/availability.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { bytes, Driver } from './helpers.js';

/** Applies `event`, returning the queues it made messages available in, in visiting order. */
function apply(d: Driver, event: BrokerEvent): string[] {
  const held = queuesHeldBy(d.state, event);
  const result = d.state.apply(event);
  const visited: string[] = [];
  forEachAvailableQueue(event, result, held, d.state, (q) => visited.push(q));
  return visited;
}

const enqueue = (queue: string, extra: { dedupKey?: string } = {}): BrokerEvent => ({
  type: 'enqueue',
  leaderTime: 1_000,
  queue,
  message: bytes('m'),
  ...extra,
});

describe('forEachAvailableQueue', () => {
  it('names an enqueue its queue, a topic its subscriptions, a refusal or duplicate none', () => {
    const d = new Driver();
    d.declare('q');
    d.declare('t', { topic: true });
    d.declare('s1', { subscription: { topic: 't' } });
    d.declare('s2', { subscription: { topic: 't' } });
    const cases: Array<[BrokerEvent, string[]]> = [
      [enqueue('q', { dedupKey: 'k' }), ['q']],
      [enqueue('q', { dedupKey: 'k' }), []], // a duplicate
      [enqueue('missing'), []], // refused
      [enqueue('t'), ['s1', 's2']],
    ];
    for (const [event, expected] of cases) {
      expect(apply(d, event)).toEqual(expected);
    }
  });

  it('names the queues a released consumer held, each once', () => {
    const d = new Driver();
    d.declare('a');
    d.declare('b');
    d.enqueue('a', 'x');
    d.enqueue('b', 'y');
    d.enqueue('a', 'z');
    d.take('a', 'c');
    d.take('b', 'c');
    d.take('a', 'c');
    const visited = apply(d, { type: 'release-consumer', leaderTime: 1_000, consumer: 'c' });
    expect(visited.sort()).toEqual(['a', 'b']);
  });

  it('names each queue a committed transaction enqueued into once, and none for a refused one', () => {
    const d = new Driver();
    d.declare('a');
    d.declare('t', { topic: true });
    d.declare('s1', { subscription: { topic: 't' } });
    const commit = (queues: string[]): BrokerEvent => ({
      type: 'commit',
      leaderTime: 1_000,
      events: queues.map((q) => ({ type: 'enqueue', leaderTime: 1_000, queue: q, message: bytes('m') })),
    });
    expect(apply(d, commit(['a', 'a', 't'])).sort()).toEqual(['a', 's1']);
    expect(apply(d, commit(['a', 'missing']))).toEqual([]);
  });
});
