/**
 * decodeEvent(bytes, 'view'): a member applies each committed entry from views of its bytes (no
 * copy per message); what makes that safe is that BrokerState copies every message it keeps.
 * These tests overwrite the source bytes after apply: a state that kept the view would change.
 */
import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import { decodeEvent, encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { EnqueueEvent } from '../../../src/cluster-broker/core/events.js';

const message = (fill: number) => new Uint8Array(1024).fill(fill);

function stateWith(queues: string[]): BrokerState {
  const state = new BrokerState();
  for (const queue of queues) state.apply({ type: 'declare', leaderTime: 1, queue, options: {} });
  return state;
}

describe("decodeEvent(bytes, 'view')", () => {
  it('gives the enqueued message as a view of the input, the default as a copy', () => {
    const bytes = encodeEvent({ type: 'enqueue', leaderTime: 1, queue: 'q', message: message(7) });
    const view = decodeEvent(bytes, 'view') as EnqueueEvent;
    const copy = decodeEvent(bytes) as EnqueueEvent;
    expect(view.message.buffer).toBe(bytes.buffer);
    expect(copy.message.buffer).not.toBe(bytes.buffer);
    expect(view.message).toEqual(copy.message);
  });

  it('names the queue of each enqueue when the queue changes from one to the next', () => {
    const queues = ['q1', 'q1', 'q2', 'q10', 'q1', 'é', 'é', 'q'.repeat(300), 'q'.repeat(300), 'q1'];
    const decoded = queues.map((queue) => {
      const bytes = encodeEvent({ type: 'enqueue', leaderTime: 1, queue, message: message(1) });
      return (decodeEvent(bytes, 'view') as EnqueueEvent).queue;
    });
    expect(decoded).toEqual(queues);
  });

  it('a queue keeps its own copy of a message applied from a view', () => {
    const state = stateWith(['q']);
    const bytes = encodeEvent({ type: 'enqueue', leaderTime: 1, queue: 'q', message: message(7) });
    state.apply(decodeEvent(bytes, 'view'));
    bytes.fill(0);
    expect(state.browse('q')[0]!.message).toEqual(message(7));
  });

  it('so does every message of a transaction', () => {
    const state = stateWith(['q']);
    const bytes = encodeEvent({
      type: 'commit',
      leaderTime: 1,
      events: [
        { type: 'enqueue', leaderTime: 1, queue: 'q', message: message(1) },
        { type: 'enqueue', leaderTime: 1, queue: 'q', message: message(2) },
      ],
    });
    state.apply(decodeEvent(bytes, 'view'));
    bytes.fill(0);
    expect(state.browse('q').map((m) => m.message)).toEqual([message(1), message(2)]);
  });
});
