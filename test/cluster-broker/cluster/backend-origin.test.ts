/**
 * Every member numbers its own requests 1, 2, 3, ...: an applied entry's outcome belongs to the
 * request with that number only when the entry's origin is this process. A member that took
 * another member's outcome for its own would settle a publisher's transfer `accepted` for a
 * message it never enqueued (lost once the member's own entry fails to commit).
 */
import { describe, expect, it } from 'vitest';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { encodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import { encodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import { handAppliedLeader } from './hand-applied-log.js';

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('cluster backend: outcomes by origin', () => {
  it("settles a request only on its own entry's outcome, not on another member's entry with the same number", async () => {
    const { backend, log } = handAppliedLeader(processKey('n1', 'a'));

    const declared = backend.submit({ type: 'declare', leaderTime: 0, queue: 'q', options: {} });
    log.apply(log.proposed[0]!);
    await declared;

    let ownApplied = false;
    let settledBeforeOwnApply: boolean | undefined;
    const enqueued = backend
      .submit({ type: 'enqueue', leaderTime: 0, queue: 'q', message: Buffer.from('ours') })
      .then((result) => {
        settledBeforeOwnApply = !ownApplied;
        return result;
      });
    expect(log.proposed).toHaveLength(2);
    // another process's request number 2 applies first
    const theirs = encodeEvent({
      type: 'enqueue',
      leaderTime: 0,
      queue: 'q',
      message: Buffer.from('theirs'),
    });
    log.apply(encodeEntry(processKey('n2', 'b'), 2, { kind: 'event', event: theirs }));
    await turn();
    ownApplied = true;
    log.apply(log.proposed[1]!);
    expect(await enqueued).toMatchObject({ type: 'enqueue', status: 'enqueued' });
    expect(settledBeforeOwnApply, 'settled on the outcome of another member').toBe(false);
    await backend.close();
  });
});
