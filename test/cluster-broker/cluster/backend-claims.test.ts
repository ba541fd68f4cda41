/**
 * The cluster backend's link claims across a minority partition. A member cut off from every
 * leader parks its requests; if the client's link there goes away meanwhile (the member closes
 * its clients as not quorate), the link's parked claim must never be sent once the partition
 * heals: committed after the claim of the member the client re-attached to, it would detach
 * that live link with amqp:link:stolen (found by the 5-member chaos schedule).
 */
import { describe, expect, it } from 'vitest';
import { ClusterBackend, type ReplicaPort } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { decodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';

/** The replica of a member in a minority: no leader it can reach, so nothing is proposed here. */
class MinorityReplica implements ReplicaPort {
  leaderId: string | null = null;
  term = 1;
  isLeader(): boolean {
    return false;
  }
  append(): never {
    throw new Error('not the leader');
  }
}

function member() {
  const backend = new ClusterBackend({
    memberId: 'n1',
    origin: processKey('n1', 'a'),
    submitTimeoutMs: 60_000,
  });
  const replica = new MinorityReplica();
  const forwarded: string[] = [];
  backend.attach(new ClusterStateMachine(), replica, (m) => {
    if (m.kind !== 'forward') return false;
    forwarded.push(decodeEntry(m.request).body.kind);
    return true;
  });
  backend.setServing(true);
  const heal = () => {
    replica.leaderId = 'n2';
    replica.term = 2;
    backend.onRole({ role: 'follower', term: 2, leaderId: 'n2' });
  };
  return { backend, forwarded, heal };
}

describe('cluster backend: claims parked in a minority', () => {
  it('a link that went away while its claim and acquire were parked sends neither after the heal', () => {
    const { backend, forwarded, heal } = member();
    // a receiver's first acquire here claims its link key first: parked, no leader reachable
    backend.submit({ type: 'acquire', leaderTime: 0, queue: 'q', consumer: 'c1/r', max: 10 }).catch(() => {});
    // the member finds itself not quorate and closes the client's connection: the link goes away
    backend.setServing(false, 'not quorate');
    backend.submit({ type: 'release-consumer', leaderTime: 0, consumer: 'c1/r' }).catch(() => {});
    heal(); // parked requests are routed to the new leader at once
    // a claim would steal the link the client re-attached elsewhere; an acquire would take
    // messages for a consumer nobody holds
    expect(forwarded).toEqual([]);
    backend.close();
  });

  it('a link still here sends its parked claim once a leader is reachable', () => {
    const { backend, forwarded, heal } = member();
    backend.submit({ type: 'acquire', leaderTime: 0, queue: 'q', consumer: 'c1/r', max: 10 }).catch(() => {});
    heal();
    expect(forwarded).toEqual(['claim', 'event']);
    backend.close();
  });
});
