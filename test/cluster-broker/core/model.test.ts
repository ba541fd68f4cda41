import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BrokerState } from '../../../src/cluster-broker/core/broker-state.js';
import type { BrokerEvent } from '../../../src/cluster-broker/core/events.js';
import type { ApplyResult } from '../../../src/cluster-broker/core/results.js';
import { eventSequence } from './arbitraries.js';
import { Model } from './model.js';

/** Refusal descriptions are prose; compare everything else. */
function normalize(r: ApplyResult): ApplyResult {
  if (r.type === 'commit') {
    return r.status === 'refused'
      ? { ...r, description: '' }
      : { ...r, results: r.results.map((x) => normalize(x) as typeof x) };
  }
  return r.type === 'enqueue' && r.status === 'refused' ? { ...r, description: '' } : r;
}

describe('BrokerState against a naive model', () => {
  it('gives the same result for every event and the same queue contents after it', () => {
    fc.assert(
      fc.property(eventSequence, (events: BrokerEvent[]) => {
        const state = new BrokerState();
        const model = new Model();
        for (const raw of events) {
          // settle seqs: picks among what the consumer holds (in the model), as in snapshot.test.ts
          let e = raw;
          if (raw.type === 'settle') {
            const held = state.acquiredBy(raw.consumer);
            e = {
              ...raw,
              seqs: [
                ...new Set(raw.seqs.map((i) => (i === 40 || held.length === 0 ? i : held[i % held.length]))),
              ],
            };
          }
          if (raw.type === 'delete' && raw.ifOwnerLostAt !== undefined && raw.ifOwnerLostAt % 2 === 1) {
            const lostAt = state.ownedQueues().find((o) => o.queue === raw.queue)?.ownerLostAt;
            if (lostAt !== undefined) e = { ...raw, ifOwnerLostAt: lostAt };
          }
          expect(normalize(state.apply(e))).toEqual(model.apply(e));
          expect(state.ownedQueues()).toEqual(model.owned());
          for (const name of model.queues.keys()) {
            expect(state.availableSeqs(name)).toEqual(model.available(name));
            expect(state.queueInfo(name)?.depth).toBe(model.depth(name));
          }
          expect(state.listQueues().map((q) => q.name)).toEqual([...model.queues.keys()]);
        }
      }),
      { numRuns: 100 },
    );
  });
});
