/**
 * A connection's output buffer (src/protocol/output.ts FrameOutput): small frames copied back to
 * back into shared slabs, big payloads handed on as they are, and bytes once taken never written
 * again (the socket may still hold them).
 */
import { describe, expect, it } from 'vitest';
import { FrameOutput } from '../../src/protocol/output.js';

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
/** A frame head as the codec leaves it: the first `pos` bytes of a bigger scratch buffer. */
const head = (n: number, fill: number) => ({ buf: Buffer.concat([bytes(n, fill), bytes(64, 0xee)]), pos: n });
const joined = (chunks: Uint8Array[]) => Buffer.concat(chunks);

describe('FrameOutput', () => {
  it('joins small frames into few buffers, in order', () => {
    const out = new FrameOutput();
    const expected: Uint8Array[] = [];
    for (let i = 0; i < 200; i++) {
      const payload = bytes(1000, 255 - i);
      out.copy(head(20, i), payload);
      expected.push(bytes(20, i), payload);
    }
    const taken = out.take();
    expect(joined(taken).equals(joined(expected))).toBe(true);
    // 200 KB in slabs growing from 1 KiB to 64 KiB (a new connection's first batch), not 400 buffers
    expect(taken.length).toBeLessThan(12);
    expect(out.empty).toBe(true);
    expect(out.take()).toEqual([]);
  });

  it('hands a big payload on as it is, between the frames around it', () => {
    const out = new FrameOutput();
    const big = bytes(100_000, 7);
    out.copy(head(8, 1));
    out.copy(head(8, 2));
    out.push(big);
    out.copy(head(8, 3));
    const taken = out.take();
    expect(taken).toHaveLength(3);
    expect(taken[1]).toBe(big);
    expect(joined(taken).equals(joined([bytes(8, 1), bytes(8, 2), big, bytes(8, 3)]))).toBe(true);
  });

  it('never writes again into bytes it handed out', () => {
    const out = new FrameOutput();
    // a first big batch: the next slab is sized for a busy connection
    for (let i = 0; i < 100; i++) out.copy(head(1000, 1));
    out.take();
    for (let i = 0; i < 10; i++) out.copy(head(1000, 2));
    const first = out.take();
    const copy = joined(first);
    for (let i = 0; i < 300; i++) out.copy(head(500, 3));
    const second = out.take();
    expect(joined(first).equals(copy)).toBe(true);
    expect(joined(second).equals(Buffer.alloc(300 * 500, 3))).toBe(true);
    // the later frames went after the first batch's bytes in the same slab
    expect(second[0]!.buffer).toBe(first[0]!.buffer);
  });
});
