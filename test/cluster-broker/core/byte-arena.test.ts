import { describe, expect, it } from 'vitest';
import {
  ByteArena,
  CHUNK_BYTES,
  MAX_PACKED_BYTES,
  sizeOf,
  viewOf,
  WHOLE_CHUNK,
} from '../../../src/cluster-broker/core/byte-arena.js';
import { Driver } from './helpers.js';

const message = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

describe('ByteArena (docs/architecture.md#message-memory)', () => {
  it('gives back every message exactly, across many chunks, sizes 0 to over the packed limit', () => {
    const arena = new ByteArena();
    const sizes = [0, 1, 100, 1024, 1063, MAX_PACKED_BYTES, MAX_PACKED_BYTES + 1, 9000];
    const kept = [];
    for (let i = 0; i < 200; i++) {
      const b = message(sizes[i % sizes.length]!, i);
      const s = arena.store(b);
      b.fill(0); // the caller's buffer is reused (a socket chunk): the arena kept a copy
      kept.push({ s, want: message(sizes[i % sizes.length]!, i) });
    }
    for (const { s, want } of kept) {
      expect(sizeOf(s)).toBe(want.length);
      expect(Buffer.from(viewOf(s)).equals(want)).toBe(true);
      if (want.length > MAX_PACKED_BYTES) expect(s.at).toBe(WHOLE_CHUNK);
      else expect(s.chunk.length).toBeLessThanOrEqual(CHUNK_BYTES);
    }
    // small messages share chunks: far fewer chunks than messages
    const chunks = new Set(kept.filter((k) => k.want.length <= MAX_PACKED_BYTES).map((k) => k.s.chunk));
    expect(chunks.size).toBeLessThan(kept.length / 4);
  });

  it('a dead-lettered message of a topic is a copy in the DLQ, not a place in the source chunk', () => {
    const d = new Driver();
    d.declare('t', { topic: true });
    d.declare('s1', { subscription: { topic: 't' } });
    d.declare('s2', { subscription: { topic: 't' } });
    d.enqueue('t', 'poison');
    const seq = d.take('s1', 'c/1');
    d.settle('c/1', [seq], { type: 'rejected' });
    const inDlq = d.state.queues.get('s1.dlq')!.available.head!;
    const inS2 = d.state.queues.get('s2')!.available.head!;
    expect(new TextDecoder().decode(inDlq.bytes)).toContain('poison');
    expect(inDlq.bytes).toEqual(inS2.bytes);
    expect(inDlq.chunk).not.toBe(inS2.chunk);
  });
});
