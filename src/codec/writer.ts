import type { FastBuffer } from './decoder.js';

/**
 * A growable byte writer over one Buffer. Encoders write straight into it (no per-field
 * allocations) and back-fill sizes; `copyOut` makes the single exact-size result.
 * Module code reuses one scratch Writer (`scratch()`): encoding never re-enters itself.
 */
export class Writer {
  buf: Buffer;
  view: DataView;
  pos = 0;
  /** nesting depth of the value being written (capped like the decoder's, and against cycles) */
  depth = 0;

  constructor(size = 4096) {
    this.buf = Buffer.allocUnsafeSlow(size);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** make room for n more bytes */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafeSlow(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  u16(v: number): void {
    this.ensure(2);
    this.view.setUint16(this.pos, v);
    this.pos += 2;
  }
  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v);
    this.pos += 4;
  }
  i32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.pos, v);
    this.pos += 4;
  }
  /** 64-bit integer from a safe-integer number or a bigint (two's complement for negatives) */
  i64(v: number | bigint): void {
    this.ensure(8);
    if (typeof v === 'bigint') {
      this.view.setBigUint64(this.pos, BigInt.asUintN(64, v));
    } else {
      const hi = Math.floor(v / 4294967296);
      this.view.setInt32(this.pos, hi);
      this.view.setUint32(this.pos + 4, v - hi * 4294967296);
    }
    this.pos += 8;
  }
  f32(v: number): void {
    this.ensure(4);
    this.view.setFloat32(this.pos, v);
    this.pos += 4;
  }
  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v);
    this.pos += 8;
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  /** writes UTF-8 (room must be ensured: 3 bytes per UTF-16 unit), returns the byte count */
  utf8At(s: string, at: number): number {
    return (this.buf as unknown as FastBuffer).utf8Write(s, at, this.buf.length - at);
  }

  /**
   * Move bytes [from, pos) forward by `by` bytes (used when an optimistic 8-bit header turns
   * out too small and must become a 32-bit one).
   */
  widen(from: number, by: number): void {
    this.ensure(by);
    this.buf.copyWithin(from + by, from, this.pos);
    this.pos += by;
  }

  /** an exact-size copy of bytes [start, pos) */
  copyOut(start = 0): Buffer {
    const n = this.pos - start;
    const out = Buffer.allocUnsafe(n);
    this.buf.copy(out, 0, start, this.pos);
    return out;
  }
}

let shared = new Writer(64 * 1024);
/** the module-wide scratch writer, reset to position 0 */
export function scratch(): Writer {
  // a one-off huge message must not pin a huge scratch buffer forever
  if (shared.buf.length > 4 * 1024 * 1024) shared = new Writer(64 * 1024);
  shared.pos = 0;
  shared.depth = 0;
  return shared;
}
/** the scratch writer as the last `scratch()` call left it */
scratch.current = (): Writer => shared;
