import { describe, expect, it } from 'vitest';
import { ByteReaderError, VarintReader, VarintWriter } from '../../../src/cluster-broker/core/binary.js';

function roundTrip(s: string): string {
  const w = new VarintWriter(16);
  w.str(s);
  return new VarintReader(w.finish()).str();
}

describe('VarintReader.str', () => {
  it('reads ASCII, multi-byte and U+FFFD strings back', () => {
    for (const s of ['', 'queue-1', 'é', 'naïve ☃ 𝄞', 'a\uFFFDb', 'x'.repeat(300)])
      expect(roundTrip(s)).toBe(s);
  });

  it('refuses invalid UTF-8 with a ByteReaderError', () => {
    const r = new VarintReader(new Uint8Array([3, 0x61, 0xff, 0x62]));
    expect(() => r.str()).toThrow(ByteReaderError);
  });

  it('drops a leading BOM as it always did (stores and logs written before read the same)', () => {
    expect(new VarintReader(new Uint8Array([4, 0xef, 0xbb, 0xbf, 0x71])).str()).toBe('q');
  });

  it('leaves the reader after the string', () => {
    const w = new VarintWriter(16);
    w.str('ab');
    w.uint(300);
    const r = new VarintReader(w.finish());
    expect(r.str()).toBe('ab');
    expect(r.uint()).toBe(300);
    r.end();
  });
});
