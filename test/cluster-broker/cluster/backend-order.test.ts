/**
 * The cluster backend sends a member's requests to the log in submission order, also when one of
 * them could not leave at once (no leader reachable, the peer connection down): the broker's
 * links rely on it (a consumer's settle before its release-consumer, a release before the next
 * acquire). And a link that goes away keeps the accepts its client already sent: only its claims
 * and acquires are dropped unsent. A dropped or overtaken settle brought consumed messages back
 * after a whole-cluster restart (cluster-restart.test.ts, seen under load).
 */
import { describe, expect, it } from 'vitest';
import { ClusterBackend, type ReplicaPort } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { decodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import { decodeEvent } from '../../../src/cluster-broker/core/event-codec.js';

/** A follower of n2 whose connection to n2 is up or down as the test says. */
class FollowerReplica implements ReplicaPort {
  leaderId: string | null = 'n2';
  term = 1;
  isLeader(): boolean {
    return false;
  }
  append(): never {
    throw new Error('not the leader');
  }
}

function follower() {
  const backend = new ClusterBackend({
    memberId: 'n1',
    origin: processKey('n1', 'a'),
    submitTimeoutMs: 60_000,
  });
  const replica = new FollowerReplica();
  const link = { up: false };
  /** What reached the leader, in order: an event's type, or the entry's kind. */
  const forwarded: string[] = [];
  /** Called after each forward is taken, from within the send (as a synchronous peer would). */
  const onSent: { hook?: (what: string) => void } = {};
  backend.attach(new ClusterStateMachine(), replica, (m) => {
    if (m.kind !== 'forward' || !link.up) return false;
    const body = decodeEntry(m.request).body;
    const what = body.kind === 'event' ? describeEvent(body.event) : body.kind;
    forwarded.push(what);
    onSent.hook?.(what);
    return true;
  });
  backend.setServing(true);
  return { backend, forwarded, link, onSent };
}

function describeEvent(bytes: Uint8Array): string {
  const e = decodeEvent(bytes);
  return e.type === 'enqueue' ? `enqueue ${e.queue}` : e.type;
}

const enqueue = (queue: string) =>
  ({
    type: 'enqueue',
    leaderTime: 0,
    queue,
    message: new Uint8Array([0x00, 0x53, 0x75, 0xa0, 0x01, 0x61]),
  }) as const;

describe('cluster backend: submission order', () => {
  it('a request never overtakes one still waiting for the leader connection', () => {
    const { backend, forwarded, link } = follower();
    backend.submit(enqueue('a')).catch(() => {});
    link.up = true; // the connection is back before the parked request's retry
    backend.submit(enqueue('b')).catch(() => {});
    backend.submit(enqueue('c')).catch(() => {});
    expect(forwarded).toEqual(['enqueue a', 'enqueue b', 'enqueue c']);
    backend.close();
  });

  it('a request submitted from within a send of parked requests takes its turn, nothing sent twice', () => {
    const { backend, forwarded, link, onSent } = follower();
    backend.submit(enqueue('a')).catch(() => {});
    link.up = true;
    onSent.hook = (what) => {
      if (what === 'enqueue a') backend.submit(enqueue('c')).catch(() => {});
    };
    backend.submit(enqueue('b')).catch(() => {});
    expect(forwarded).toEqual(['enqueue a', 'enqueue b', 'enqueue c']);
    backend.close();
  });

  it('a closing link sends its client accepts before its release, also when both had to wait', async () => {
    const { backend, forwarded, link } = follower();
    // the link's first acquire (and its claim) went out while the connection was up
    link.up = true;
    backend.submit({ type: 'acquire', leaderTime: 0, queue: 'q', consumer: 'c1/r', max: 10 }).catch(() => {});
    expect(forwarded).toEqual(['claim', 'acquire']);
    // the connection to the leader drops; the client's accepts and then its detach arrive
    link.up = false;
    let settle: 'pending' | 'failed' = 'pending';
    backend
      .submit({
        type: 'settle',
        leaderTime: 0,
        consumer: 'c1/r',
        seqs: [1, 2, 3],
        outcome: { type: 'accepted' },
      })
      .catch(() => {
        settle = 'failed';
      });
    backend.submit({ type: 'release-consumer', leaderTime: 0, consumer: 'c1/r' }).catch(() => {});
    await Promise.resolve();
    expect(settle).toBe('pending'); // not dropped with the link
    link.up = true;
    backend.onRole({ role: 'follower', term: 2, leaderId: 'n2' }); // parked requests are routed at once
    expect(forwarded).toEqual(['claim', 'acquire', 'settle', 'release-consumer']);
    backend.close();
  });
});
