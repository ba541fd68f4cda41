/**
 * The Raft core has no AMQP in it (replication/raft/ imports nothing outside itself), so refusing
 * a proposal on a follower in AMQP's terms is the driver's job: the real Replica, deposed by a
 * leader of a later term, rejects a proposal with NotLeaderError ('amqp:not-allowed', naming the
 * new leader), which is what the broker turns into a refusal its clients understand.
 */
import { expect, it } from 'vitest';
import { NotLeaderError } from '../../../src/cluster-broker/replication/errors.js';
import { settle, startCapturedLeader } from './captured-leader.js';

it('a deposed replica refuses a proposal with NotLeaderError naming the new leader', async () => {
  const leader = await startCapturedLeader();
  try {
    const { replica, deliver } = leader;
    const term = replica.term + 1;
    deliver({
      type: 'append',
      from: 'n2',
      to: 'n1',
      term,
      prevIndex: 0,
      prevTerm: 0,
      entries: [],
      commit: 0,
    });
    await settle();
    expect(replica.leaderId).toBe('n2');
    const refusal = await replica.propose(new Uint8Array([1])).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refusal).toBeInstanceOf(NotLeaderError);
    expect(refusal).toMatchObject({ condition: 'amqp:not-allowed', leaderId: 'n2' });
  } finally {
    await leader.close();
  }
});
