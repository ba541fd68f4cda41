import { describe, expect, it } from 'vitest';
import { ByteReaderError, VarintReader, VarintWriter } from '../../../src/cluster-broker/core/binary.js';
import { RepeatedString } from '../../../src/cluster-broker/core/repeated-string.js';

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

describe('VarintReader.strRepeated', () => {
  const read = (values: string[], last: RepeatedString): string[] => {
    const w = new VarintWriter(16);
    for (const v of values) w.str(v);
    const r = new VarintReader(w.finish());
    const out = values.map(() => r.strRepeated(last));
    r.end();
    return out;
  };

  it('reads what str() reads, whatever came before, the same string object while it repeats', () => {
    const last = new RepeatedString();
    const values = [
      'n1@abc',
      'n1@abc',
      'n1@abd',
      'n2@abd',
      '',
      '',
      'é',
      'x'.repeat(200),
      'x'.repeat(200),
      'n1@abc',
    ];
    expect(read(values, last)).toEqual(values);
    // a reader of other bytes with the same cache
    expect(read(['n1@abc', 'n1@abc'], last)).toEqual(['n1@abc', 'n1@abc']);
  });

  it('gives the kept string again only for the same bytes, and refuses bad UTF-8 like str()', () => {
    const last = new RepeatedString();
    const bytes = new Uint8Array([2, 0x61, 0x62]);
    const a = new VarintReader(bytes).strRepeated(last);
    expect(last.lookup(bytes, 1, 2)).toBe(a);
    expect(last.lookup(new Uint8Array([0x61, 0x63]), 0, 2)).toBeUndefined();
    expect(last.lookup(new Uint8Array([0x61]), 0, 1)).toBeUndefined();
    expect(() => new VarintReader(new Uint8Array([3, 0x61, 0xff, 0x62])).strRepeated(last)).toThrow(
      ByteReaderError,
    );
    expect(new VarintReader(bytes).strRepeated(last)).toBe('ab');
  });
});
