/**
 * The backend encodes small requests into shared chunks, not a buffer each
 * (docs/cluster-member.md#per-message-cost): every entry must still be its own bytes, the same
 * after the requests that follow it were encoded and stamped, and a large one gets its own buffer.
 */
import { describe, expect, it } from 'vitest';
import { ClusterBackend, type ReplicaPort } from '../../../src/cluster-broker/cluster/cluster-backend.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { decodeEntry, encodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import { MAX_PACKED_BYTES } from '../../../src/cluster-broker/core/byte-arena.js';
import { decodeEvent } from '../../../src/cluster-broker/core/event-codec.js';
import type { EnqueueEvent } from '../../../src/cluster-broker/core/events.js';

/** A leader that only records what it is asked to propose (nothing commits). */
class RecordingLeader implements ReplicaPort {
  readonly leaderId = 'n1';
  readonly term = 1;
  readonly proposed: Uint8Array[] = [];
  isLeader(): boolean {
    return true;
  }
  append(data: Uint8Array): void {
    this.proposed.push(data);
  }
}

const body = (i: number, size = 1024) => new Uint8Array(size).fill(i % 251);

function messageOf(entry: Uint8Array): Uint8Array {
  const e = decodeEntry(entry);
  if (e.body.kind !== 'event') throw new Error(`not an event entry: ${e.body.kind}`);
  return (decodeEvent(e.body.event) as EnqueueEvent).message;
}

/** A backend on a recording leader (the tests' one member, n1). */
function leaderBackend(): { backend: ClusterBackend; leader: RecordingLeader } {
  const backend = new ClusterBackend({
    memberId: 'n1',
    origin: processKey('n1', 'a'),
    submitTimeoutMs: 60_000,
  });
  const leader = new RecordingLeader();
  backend.attach(undefined as never, leader, () => false);
  return { backend, leader };
}

/** Entry i holds body(i), stamped where it lies, and the entries share far fewer buffers. */
function expectStampedInSharedChunks(entries: Uint8Array[]): void {
  entries.forEach((entry, i) => {
    expect(messageOf(entry)).toEqual(body(i));
    expect(decodeEntry(entry).leaderTime).toBeGreaterThan(0);
  });
  expect(new Set(entries.map((e) => e.buffer)).size).toBeLessThan(entries.length / 10);
}

describe('cluster backend: entry bytes', () => {
  it('keeps every small entry intact in shared chunks; a large one in its own buffer', () => {
    const { backend, leader } = leaderBackend();
    backend.setServing(true);
    const n = 200;
    for (let i = 0; i < n; i++)
      void backend.submit({ type: 'enqueue', leaderTime: 0, queue: 'q', message: body(i) }).catch(() => {});
    void backend
      .submit({ type: 'enqueue', leaderTime: 0, queue: 'q', message: body(7, 2 * MAX_PACKED_BYTES) })
      .catch(() => {});
    backend.close();

    expect(leader.proposed).toHaveLength(n + 1);
    const small = leader.proposed.slice(0, n);
    expectStampedInSharedChunks(small);
    const large = leader.proposed[n]!;
    expect(messageOf(large)).toEqual(body(7, 2 * MAX_PACKED_BYTES));
    expect(small.some((e) => e.buffer === large.buffer)).toBe(false);
  });

  it('copies forwarded requests into shared chunks: the received frame can be reused', () => {
    const { backend, leader } = leaderBackend();
    const n = 200;
    // the requests as a follower sends them, back to back in one received buffer
    const requests = Array.from({ length: n }, (_, i) =>
      encodeEntry(processKey('n2', 'b'), i + 1, {
        kind: 'event',
        event: { type: 'enqueue', leaderTime: 0, queue: 'q', message: body(i) },
      }),
    );
    const frame = Buffer.concat(requests);
    let at = 0;
    for (const r of requests) {
      backend.onForward(frame.subarray(at, at + r.length));
      at += r.length;
    }
    frame.fill(0); // the socket's buffer, reused or freed: the log must not see it
    expect(leader.proposed).toHaveLength(n);
    expectStampedInSharedChunks(leader.proposed);
  });
});
