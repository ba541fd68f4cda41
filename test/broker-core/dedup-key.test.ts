import { describe, expect, it } from 'vitest';
import { dedupKeyOf } from '../../src/cluster-broker/core/dedup-key.js';
import { Typed } from '../../src/codec/typed.js';

describe('dedupKeyOf', () => {
  it('keys by type and value, so equal values of different types differ', () => {
    expect(dedupKeyOf('1')).toBe('string:1');
    expect(dedupKeyOf(new Typed('ulong', 1))).toBe('ulong:1');
    expect(dedupKeyOf(new Typed('ulong', 2n ** 64n - 1n))).toBe('ulong:18446744073709551615');
    expect(dedupKeyOf(new Uint8Array([0, 0x1f, 0xff]))).toBe('binary:001fff');
    expect(new Set([dedupKeyOf('1'), dedupKeyOf(new Typed('ulong', 1)), dedupKeyOf(1)]).size).toBe(3);
  });

  it('gives one key for a uuid as text (any case) or as 16 bytes', () => {
    const text = '0123ABCD-0000-4000-8000-00000000FFFF';
    const bytes = Uint8Array.from([1, 0x23, 0xab, 0xcd, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff]);
    expect(dedupKeyOf(new Typed('uuid', text))).toBe('uuid:0123abcd-0000-4000-8000-00000000ffff');
    expect(dedupKeyOf(new Typed('uuid', bytes))).toBe('uuid:0123abcd-0000-4000-8000-00000000ffff');
  });

  it('no message-id: no key (never deduplicated)', () => {
    expect(dedupKeyOf(undefined)).toBeUndefined();
    expect(dedupKeyOf(null)).toBeUndefined();
  });
});
