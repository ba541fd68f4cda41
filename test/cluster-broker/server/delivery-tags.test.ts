import { describe, expect, it } from 'vitest';
import { DeliveryTags } from '../../../src/cluster-broker/server/outgoing-link.js';

/** The tag DeliveryTags gives for counter value `n`: its big-endian float64. */
function expected(n: number): number[] {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat64(0, n);
  return [...b];
}

describe('DeliveryTags', () => {
  it('gives every link its counter as tags that keep their bytes while later tags are made', () => {
    const a = new DeliveryTags();
    const b = new DeliveryTags();
    const fromA: Uint8Array[] = [];
    const fromB: Uint8Array[] = [];
    // more tags than one shared block holds, two links taking turns
    for (let i = 0; i < 1500; i++) {
      fromA.push(a.next());
      fromB.push(b.next());
    }
    for (let i = 0; i < 1500; i++) {
      expect(fromA[i]!.length).toBe(8);
      expect([...fromA[i]!]).toEqual(expected(i));
      expect([...fromB[i]!]).toEqual(expected(i));
    }
  });
});
