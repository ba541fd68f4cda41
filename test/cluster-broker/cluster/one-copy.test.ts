/**
 * One copy of a replicated message on a member (docs/cluster-member.md#one-copy): a member's
 * state keeps each queued message as a view of its committed entry's bytes, which is only right
 * because no source of entry bytes ever writes into them or reuses their buffer after they are
 * appended. These tests hold both halves: the view (no copy) and the sources that never rewrite.
 */
import { describe, expect, it } from 'vitest';
import { ClusterStateMachine } from '../../../src/cluster-broker/cluster/cluster-state-machine.js';
import { processKey } from '../../../src/cluster-broker/cluster/consumer-keys.js';
import { encodeEntry } from '../../../src/cluster-broker/cluster/entry-codec.js';
import { MAX_PINNED_BYTES } from '../../../src/cluster-broker/core/byte-arena.js';
import { FrameSplitter } from '../../../src/cluster-broker/replication/framing.js';
import { entryRecord, parseLog } from '../../../src/cluster-broker/replication/log-records.js';
import { handAppliedLeader } from './hand-applied-log.js';

const origin = processKey('n1', 'a');

function message(n: number, size = 100): Uint8Array {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = (n * 31 + i) & 0xff;
  return b;
}

function enqueueEntry(seq: number, m: Uint8Array): Uint8Array {
  return encodeEntry(
    origin,
    seq,
    { kind: 'event', event: { type: 'enqueue', leaderTime: 1, queue: 'q', message: m } },
    1,
  );
}

/** A state machine with queue `q` declared (entry 1). */
function member(): ClusterStateMachine {
  const sm = new ClusterStateMachine({});
  sm.apply({
    index: 1,
    term: 1,
    data: encodeEntry(
      origin,
      1,
      { kind: 'event', event: { type: 'declare', leaderTime: 1, queue: 'q', options: {} } },
      1,
    ),
  });
  return sm;
}

/** `entry` placed at `at` in a buffer of `size` bytes, as a socket read or a framing copy holds it. */
function inBuffer(entry: Uint8Array, size: number, at: number): Uint8Array {
  const buf = new Uint8Array(size);
  buf.set(entry, at);
  return buf.subarray(at, at + entry.length);
}

function drain(sm: ClusterStateMachine, n: number): Uint8Array[] {
  const r = sm.state.apply({ type: 'acquire', leaderTime: 2, queue: 'q', consumer: 'c', max: n });
  return r.messages.map((m) => m.message);
}

describe('one copy of a replicated message on a member', () => {
  it('keeps a queued message as a view of its entry buffer, not a copy', () => {
    const sm = member();
    const small = message(1);
    const large = message(2, 6000); // over MAX_PACKED_BYTES: kept as a view too
    const read = inBuffer(enqueueEntry(2, small), 64 * 1024, 1000);
    const other = inBuffer(enqueueEntry(3, large), 64 * 1024, 7);
    sm.apply({ index: 2, term: 1, data: read });
    sm.apply({ index: 3, term: 1, data: other });
    const [a, b] = drain(sm, 2);
    expect(a).toEqual(small);
    expect(b).toEqual(large);
    expect(a!.buffer).toBe(read.buffer);
    expect(b!.buffer).toBe(other.buffer);
  });

  it('copies a message whose buffer is larger than a view may pin', () => {
    const sm = member();
    const m = message(3);
    const data = inBuffer(enqueueEntry(2, m), MAX_PINNED_BYTES + 1, 500);
    sm.apply({ index: 2, term: 1, data });
    data.fill(0); // the catch-up append's buffer goes; the queued copy does not
    const [kept] = drain(sm, 1);
    expect(kept).toEqual(m);
    expect(kept!.buffer).not.toBe(data.buffer);
  });

  it('the leader never writes into an entry it appended, its own requests or forwarded ones', async () => {
    const { backend, sm, log } = handAppliedLeader(origin);
    const declared = backend.submit({ type: 'declare', leaderTime: 0, queue: 'q', options: {} });
    log.apply(log.proposed[0]!);
    await declared;
    // enough requests to fill several of the backend's full-size (64 KiB) entry chunks; each appended entry applied
    // at once (as its view is then kept), its bytes remembered as they were then
    const asApplied: Uint8Array[] = [];
    const sent: Uint8Array[] = [];
    for (let i = 0; i < 1500; i++) {
      const m = message(i, 200 + (i % 7));
      sent.push(m);
      if (i % 3 === 0)
        backend.onForward(
          encodeEntry(processKey('n2', 'b'), i + 1, {
            kind: 'event',
            event: { type: 'enqueue', leaderTime: 0, queue: 'q', message: m },
          }),
        );
      else void backend.submit({ type: 'enqueue', leaderTime: 0, queue: 'q', message: m });
      const entry = log.proposed.at(-1)!;
      log.apply(entry);
      asApplied.push(new Uint8Array(entry));
    }
    const changed = log.proposed.slice(1).filter((entry, i) => !Buffer.from(entry).equals(asApplied[i]!));
    expect(changed.length).toBe(0);
    const drained = drain(sm, 1500);
    expect(drained.filter((m, i) => !Buffer.from(m).equals(sent[i]!)).length).toBe(0);
  });

  it("a follower's frames keep their bytes after later socket reads, across read boundaries", () => {
    const splitter = new FrameSplitter(1024 * 1024, true);
    const payloads = Array.from({ length: 50 }, (_, i) => message(i, 300 + ((i * 397) % 5000)));
    const stream = Buffer.concat(
      payloads.flatMap((p) => {
        const head = Buffer.alloc(4);
        head.writeUInt32BE(p.length, 0);
        return [head, Buffer.from(p)];
      }),
    );
    const frames: Uint8Array[] = [];
    // reads of odd sizes, each a buffer of its own as a socket's are, cut frames and headers
    for (let off = 0, k = 0; off < stream.length; k++) {
      const n = [1000, 3, 4097, 65536, 7][k % 5]!;
      splitter.push(Buffer.from(stream.subarray(off, off + n)), (f) => frames.push(f));
      off += n;
    }
    expect(frames.length).toBe(payloads.length);
    expect(frames.filter((f, i) => !Buffer.from(f).equals(payloads[i]!)).length).toBe(0);
  });

  it("a restarted member's entries read back from its log are copies the reader does not reuse", () => {
    const m = message(4);
    const file = Buffer.concat([entryRecord({ index: 2, term: 1, data: enqueueEntry(2, m) })]);
    const { ops } = parseLog(file);
    file.fill(0); // the read window goes, or is read into again
    const sm = member();
    for (const op of ops) if (op.kind === 'entry') sm.apply(op.entry);
    expect(drain(sm, 1)).toEqual([m]);
  });
});
