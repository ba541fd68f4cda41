import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage, encodeMessageParts } from '../../src/codec/index.js';
import { SLAB_MAX, SLAB_MIN, SLAB_SIZE } from '../../src/codec/output-slab.js';

/** a body of n bytes, every byte derived from seed, so two bodies differ everywhere */
function body(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + seed * 31) & 0xff;
  return b;
}

describe('encodeMessage results carved from a shared slab', () => {
  it('each result keeps its own bytes while later ones are encoded (across slab boundaries)', () => {
    // sizes around both limits and one that leaves a slab's tail unused; enough of them to fill
    // several slabs
    const sizes = [SLAB_MIN - 9, SLAB_MIN, 64 * 1024, 100_001, SLAB_MAX - 9, SLAB_MAX + 1];
    const count = Math.ceil((4 * SLAB_SIZE) / (64 * 1024));
    const bodies: Uint8Array[] = [];
    const encoded: Uint8Array[] = [];
    for (let i = 0; i < count; i++) {
      const b = body(sizes[i % sizes.length], i);
      bodies.push(b);
      encoded.push(encodeMessage({ messageId: `m-${i}`, body: b, footer: { n: i } }));
    }
    for (let i = 0; i < count; i++) {
      const m = decodeMessage(encoded[i]);
      expect(m.messageId).toBe(`m-${i}`);
      expect(m.footer).toEqual({ n: i });
      expect(Buffer.from(m.body as Uint8Array).equals(bodies[i])).toBe(true);
      // the same bytes as the zero-copy parts, which never touch the slab
      expect(
        Buffer.from(encoded[i]).equals(Buffer.concat(encodeMessageParts(decodeMessage(encoded[i])))),
      ).toBe(true);
    }
  });

  it('writing into one result changes no other result', () => {
    const a = encodeMessage({ body: body(64 * 1024, 1) });
    const b = encodeMessage({ body: body(64 * 1024, 2) });
    const before = Buffer.from(b);
    a.fill(0xee);
    expect(Buffer.from(b).equals(before)).toBe(true);
  });
});
