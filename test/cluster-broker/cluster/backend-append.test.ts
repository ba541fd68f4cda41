/**
 * The leader appends its own requests with nothing waiting on the log (ReplicaPort.append): a
 * request's outcome comes only from this member's apply of its entry, a change of leader or term,
 * a log that refuses the entry at once, or the deadline. These are the ways out that the per-entry
 * proposal promise used to provide, each still taken.
 */
import { describe, expect, it } from 'vitest';
import { ClusterBackend, type ReplicaPort } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { OutcomeUnknownError } from '../../../src/cluster-broker/server/backend.js';
import { handAppliedLeader } from './hand-applied-log.js';

const origin = processKey('n1', 'a');
const enqueue = { type: 'enqueue', leaderTime: 0, queue: 'q', message: Buffer.from('m') } as const;

const leader = () => handAppliedLeader(origin);

describe('cluster backend: requests appended by the leader', () => {
  it('answers a request with the result, or the error, of its own apply', async () => {
    const { backend, log } = leader();
    const declared = backend.submit({ type: 'declare', leaderTime: 0, queue: 'q', options: {} });
    log.apply(log.proposed[0]!);
    await expect(declared).resolves.toMatchObject({ type: 'declare' });
    const failed = backend.submit(enqueue);
    backend.onApplied(origin, 2, { ok: false, error: new Error('apply refused it') });
    await expect(failed).rejects.toThrow('apply refused it');
  });

  it('fails a request at once, outcome unknown, when the log refuses to append it', async () => {
    const refusing: ReplicaPort = {
      leaderId: 'n1',
      term: 1,
      isLeader: () => true,
      append: () => {
        throw new Error('replica closed');
      },
    };
    const backend = new ClusterBackend({ memberId: 'n1', origin, submitTimeoutMs: 60_000 });
    backend.attach(new ClusterStateMachine({}), refusing, () => false);
    backend.setServing(true);
    const sent = backend.submit(enqueue);
    expect(backend.pendingCount).toBe(0);
    await expect(sent).rejects.toBeInstanceOf(OutcomeUnknownError);
    await expect(sent).rejects.toThrow('proposal failed: replica closed');
  });

  it('fails an appended request, outcome unknown, once this member no longer leads its term', async () => {
    const { backend } = leader();
    const sent = backend.submit(enqueue);
    expect(backend.pendingCount).toBe(1);
    backend.onRole({ role: 'follower', term: 2, leaderId: 'n2' });
    await expect(sent).rejects.toBeInstanceOf(OutcomeUnknownError);
    await expect(sent).rejects.toThrow('leader changed to n2 (term 2)');
  });
});
