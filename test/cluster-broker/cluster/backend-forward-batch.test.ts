/**
 * A follower forwards the requests its clients make in one event-loop turn to the leader as one
 * peer message, in order (docs/cluster-member.md#forward-batches), up to FORWARD_BATCH_BYTES a
 * message: a window of client sends costs the two members a few messages, not one each. Every
 * request is still answered once, by the follower's own apply; a leader change before the turn's
 * forward went out moves the requests to the new leader, one after it fails them as before.
 */
import { describe, expect, it } from 'vitest';
import { ClusterBackend, type ReplicaPort } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { decodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import {
  type AppMessage,
  decodeApp,
  encodeApp,
  FORWARD_BATCH_BYTES,
} from '../../../src/cluster-broker/cluster/peer-wire.js';
import type { Committed } from '../../../src/cluster-broker/replication/index.js';
import { OutcomeUnknownError } from '../../../src/cluster-broker/server/backend.js';
import { HandAppliedLog } from './hand-applied-log.js';

/** A follower's view of the cluster: `leaderId` leads, nothing is proposed here. */
class FollowerPort implements ReplicaPort {
  leaderId: string | null = 'n1';
  term = 1;
  isLeader(): boolean {
    return false;
  }
  propose(): Promise<Committed> {
    return Promise.reject(new Error('not the leader'));
  }
}

/** The end of this turn: the follower's queued forwards have gone out. */
const turnEnds = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Follower n2 and leader n1, each a real backend over a real state machine; every peer message
 * the follower sends is encoded and decoded as on the wire and counted, and the leader's
 * proposals are applied by hand on both members, in log order.
 */
function twoMembers() {
  let follower: ClusterBackend | undefined;
  let leader: ClusterBackend | undefined;
  const followerSm = new ClusterStateMachine({ applied: (o, seq, r) => follower?.onApplied(o, seq, r) });
  const leaderSm = new ClusterStateMachine({ applied: (o, seq, r) => leader?.onApplied(o, seq, r) });
  leader = new ClusterBackend({ memberId: 'n1', origin: processKey('n1', 'a'), submitTimeoutMs: 60_000 });
  const leaderLog = new HandAppliedLog(leaderSm);
  leader.attach(leaderSm, leaderLog, () => false);
  follower = new ClusterBackend({ memberId: 'n2', origin: processKey('n2', 'b'), submitTimeoutMs: 60_000 });
  const port = new FollowerPort();
  /** The forwards the follower sent, as the addressee decoded them, and their encoded sizes. */
  const sent: Array<{ message: AppMessage; bytes: number }> = [];
  follower.attach(followerSm, port, (m) => {
    const wire = encodeApp(m);
    const message = decodeApp(wire);
    sent.push({ message, bytes: wire.length });
    if (message.kind === 'forward' && message.to === 'n1') leader!.onForward(message.requests);
    return true;
  });
  follower.setServing(true);
  let index = 0;
  const applyProposed = () => {
    for (const data of leaderLog.proposed.splice(0)) {
      index++;
      leaderSm.apply({ index, term: 1, data });
      followerSm.apply({ index, term: 1, data });
    }
  };
  return { follower, port, sent, leaderLog, applyProposed };
}

const enqueue = (follower: ClusterBackend, i: number, size = 100) =>
  follower.submit({
    type: 'enqueue',
    leaderTime: 0,
    queue: 'q',
    message: new Uint8Array(size).fill(i % 251),
  });

/** The sequence numbers of the requests a forward carries, in its order. */
const seqsOf = (m: AppMessage) => (m.kind === 'forward' ? m.requests.map((r) => decodeEntry(r).seq) : []);

describe('cluster backend: a follower forwards a turn of requests as one message', () => {
  it('sends N requests of one turn in one peer message, in order; each is answered once', async () => {
    const { follower, sent, leaderLog, applyProposed } = twoMembers();
    const n = 500;
    const declared = follower.submit({ type: 'declare', leaderTime: 0, queue: 'q', options: {} });
    const answers = Array.from({ length: n }, (_, i) => enqueue(follower, i));
    expect(sent, 'nothing goes out before the turn ends').toHaveLength(0);
    await turnEnds();

    expect(sent).toHaveLength(1);
    expect(seqsOf(sent[0]!.message)).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1));
    // the leader proposed every forwarded request, in the follower's order
    expect(leaderLog.proposed.map((e) => decodeEntry(e).seq)).toEqual(seqsOf(sent[0]!.message));

    applyProposed();
    await expect(declared).resolves.toBeDefined();
    const results = await Promise.all(answers);
    expect(results.map((r) => r.status)).toEqual(Array(n).fill('enqueued'));
    expect(follower.pendingCount).toBe(0);
    follower.close();
  });

  it('splits a turn larger than FORWARD_BATCH_BYTES into several messages, in order', async () => {
    const { follower, sent } = twoMembers();
    const size = 8 * 1024;
    const n = Math.ceil((3 * FORWARD_BATCH_BYTES) / size);
    for (let i = 0; i < n; i++) enqueue(follower, i, size).catch(() => {});
    await turnEnds();

    expect(sent.length).toBeGreaterThanOrEqual(3);
    expect(sent.length).toBeLessThan(n / 10);
    for (const { bytes } of sent) expect(bytes).toBeLessThan(FORWARD_BATCH_BYTES + 2 * size);
    expect(sent.flatMap(({ message }) => seqsOf(message))).toEqual(
      Array.from({ length: n }, (_, i) => i + 1),
    );
    follower.close();
  });

  it('a leader change before the turn ends sends the queued requests to the new leader', async () => {
    const { follower, port, sent } = twoMembers();
    const answers = Array.from({ length: 10 }, (_, i) => enqueue(follower, i));
    let failed = 0;
    for (const a of answers) a.catch(() => failed++);
    port.leaderId = 'n3';
    port.term = 2;
    follower.onRole({ role: 'follower', term: 2, leaderId: 'n3' });
    await turnEnds();
    expect(sent.map(({ message }) => message.to)).toEqual(['n3']);
    expect(failed).toBe(0);
    follower.close();
  });

  it('a leader change after the forward went out fails its requests: outcome unknown', async () => {
    const { follower, port, sent } = twoMembers();
    const answers = Array.from({ length: 10 }, (_, i) => enqueue(follower, i));
    await turnEnds();
    expect(sent).toHaveLength(1);
    port.leaderId = 'n3';
    port.term = 2;
    follower.onRole({ role: 'follower', term: 2, leaderId: 'n3' });
    const outcomes = await Promise.allSettled(answers);
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(OutcomeUnknownError);
      expect(String((o as PromiseRejectedResult).reason.message)).toContain('leader changed to n3');
    }
    expect(sent).toHaveLength(1);
    follower.close();
  });
});

describe('peer wire: forward', () => {
  it('refuses a forward whose request count exceeds its bytes, before allocating for it', () => {
    const wire = encodeApp({ kind: 'forward', from: 'n2', to: 'n1', requests: [new Uint8Array([9])] });
    // [tag][kind][from][to][count]...: the count byte follows the two one-byte-length names
    const countAt = 2 + 3 + 3;
    expect(wire[countAt]).toBe(1);
    const forged = new Uint8Array([...wire.subarray(0, countAt), 0xff, 0xff, 0xff, 0x7f, 1, 9]);
    expect(() => decodeApp(forged)).toThrow(/forward of \d+ requests/);
    const truncated = wire.subarray(0, wire.length - 1);
    expect(() => decodeApp(truncated)).toThrow(/truncated/);
  });
});
