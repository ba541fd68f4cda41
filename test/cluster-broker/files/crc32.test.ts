/** CRC-32 over whole buffers, continued, and over ranges: the check every stored record carries. */
import { describe, expect, it } from 'vitest';
import { crc32, crc32Range, crc32Table } from '../../../src/cluster-broker/files/crc32.js';
import { bytes } from '../core/helpers.js';

describe('crc32', () => {
  it('native and table-driven agree with the standard check value', () => {
    const check = bytes('123456789');
    expect(crc32Table(check)).toBe(0xcbf43926);
    expect(crc32(check)).toBe(0xcbf43926);
    const data = new Uint8Array(1000).map((_, i) => (i * 31) & 0xff);
    expect(crc32(data.subarray(500), crc32(data.subarray(0, 500)))).toBe(crc32Table(data));
  });

  it('over a range of a buffer, alone or continued, is the checksum of that range', () => {
    const data = new Uint8Array(100).map((_, i) => (i * 31 + 7) & 0xff);
    expect(crc32Range(data, 0, 100)).toBe(crc32(data));
    expect(crc32Range(data, 10, 28)).toBe(crc32(data.subarray(10, 28)));
    expect(crc32Range(data, 50, 50)).toBe(crc32(new Uint8Array(0)));
    expect(crc32(data.subarray(28, 90), crc32Range(data, 10, 28))).toBe(crc32(data.subarray(10, 90)));
    expect(crc32Range(data, 28, 90, crc32(data.subarray(10, 28)))).toBe(crc32(data.subarray(10, 90)));
  });
});
