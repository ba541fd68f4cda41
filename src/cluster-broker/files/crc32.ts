/**
 * CRC-32 (IEEE, as zlib/gzip). Uses zlib.crc32 when the runtime has it (Node >= 20.15, native and
 * fast), else a table-driven fallback. `crc32(data, previous)` continues a running checksum.
 */
import * as zlib from 'node:zlib';

type Crc32Fn = (data: Uint8Array, value?: number) => number;

let table: Uint32Array | undefined;

function makeTable(): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}

/** The table-driven implementation (exported so tests can check it against the native one). */
export function crc32Table(data: Uint8Array, value = 0): number {
  return crc32Range(data, 0, data.length, value);
}

/**
 * The checksum of `data[start, end)`, continuing `value`: for the few fixed bytes around a
 * record's payload, where a `subarray` for the native call would be an object per record.
 */
export function crc32Range(data: Uint8Array, start: number, end: number, value = 0): number {
  table ??= makeTable();
  let c = (value ^ 0xffffffff) >>> 0;
  for (let i = start; i < end; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const native = (zlib as unknown as { crc32?: Crc32Fn }).crc32;

export const crc32: Crc32Fn = typeof native === 'function' ? (d, v = 0) => native(d, v) >>> 0 : crc32Table;
