import { describe, expect, it } from 'vitest';
import {
  availableQueues,
  forEachAvailableQueue,
  queuesHeldBy,
} from '../../../src/cluster-broker/core/availability.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import { bytes, Driver } from './helpers.js';

/** Applies `event`, returning the queues each way of asking names. */
function apply(d: Driver, event: BrokerEvent): { visited: string[]; listed: string[] } {
  const held = queuesHeldBy(d.state, event);
  const result = d.state.apply(event);
  const visited: string[] = [];
  forEachAvailableQueue(event, result, held, d.state, (q) => visited.push(q));
  return { visited, listed: availableQueues(event, result, held, d.state) };
}

const enqueue = (queue: string, extra: { dedupKey?: string } = {}): BrokerEvent => ({
  type: 'enqueue',
  leaderTime: 1_000,
  queue,
  message: bytes('m'),
  ...extra,
});

describe('forEachAvailableQueue', () => {
  it('names what availableQueues names: an enqueue its queue, a topic its subscriptions, a refusal or duplicate none', () => {
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
      const { visited, listed } = apply(d, event);
      expect(visited).toEqual(expected);
      expect(listed).toEqual(expected);
    }
  });

  it('names the queues a released consumer held, as availableQueues does', () => {
    const d = new Driver();
    d.declare('a');
    d.declare('b');
    d.enqueue('a', 'x');
    d.enqueue('b', 'y');
    d.take('a', 'c');
    d.take('b', 'c');
    const { visited, listed } = apply(d, { type: 'release-consumer', leaderTime: 1_000, consumer: 'c' });
    expect(visited.sort()).toEqual(['a', 'b']);
    expect(listed.sort()).toEqual(['a', 'b']);
  });
});
