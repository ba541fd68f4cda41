/**
 * slabReads tells its 'data' listeners whether a read filled the room it was offered: the
 * connection holds its writes for the next read then (client/physical.ts).
 */
import { describe, expect, it } from 'vitest';
import { slabReads } from '../../src/client/slab-reads.js';

describe('slab reads', () => {
  it('marks a read that filled its buffer, and only that one', () => {
    const seen: Array<[number, boolean]> = [];
    const reads = slabReads(() => ({
      emit: (_event: 'data', chunk: Uint8Array, filled: boolean) => {
        seen.push([chunk.length, filled]);
        return true;
      },
    }));
    const first = reads.buffer();
    reads.callback(100, first);
    const second = reads.buffer();
    expect(second.length).toBe(first.length - 100);
    reads.callback(second.length, second);
    expect(seen).toEqual([
      [100, false],
      [second.length, true],
    ]);
  });
});
