/** The state machine tells its `available` hook which queues an applied entry gave messages to. */
import { describe, expect, it } from 'vitest';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { encodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';

describe('ClusterStateMachine available hook', () => {
  it('names the queue of each applied enqueue, the subscriptions of a topic, and nothing for a refused one', () => {
    const available: string[] = [];
    const sm = new ClusterStateMachine({ available: (q) => available.push(q) });
    let index = 0;
    const apply = (event: BrokerEvent) =>
      sm.apply({ index: ++index, term: 1, data: encodeEntry('n1@a', index, { kind: 'event', event }, 10) });
    const message = new Uint8Array([1]);
    apply({ type: 'declare', leaderTime: 1, queue: 'q', options: {} });
    apply({ type: 'declare', leaderTime: 1, queue: 't', options: { topic: true } });
    apply({ type: 'declare', leaderTime: 1, queue: 's', options: { subscription: { topic: 't' } } });
    available.length = 0;
    apply({ type: 'enqueue', leaderTime: 1, queue: 'q', message });
    apply({ type: 'enqueue', leaderTime: 1, queue: 'missing', message });
    apply({ type: 'enqueue', leaderTime: 1, queue: 't', message });
    apply({ type: 'enqueue', leaderTime: 1, queue: 'q', message });
    expect(available).toEqual(['q', 's', 'q']);
  });
});
