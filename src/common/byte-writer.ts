/**
 * The growable byte writer under every binary layout of quorate: the AMQP codec, the broker's
 * event, snapshot and entry layouts, and the replication wire. Encoders write straight into one
 * buffer that doubles when full (no per-field allocations) and may back-fill sizes. Numbers are
 * big-endian, as AMQP and our own layouts are.
 */
export class ByteWriter {
  buf: Buffer;
  view: DataView;
  pos = 0;

  constructor(size = 4096) {
    this.buf = Buffer.allocUnsafeSlow(size);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /** make room for n more bytes */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = Math.max(this.buf.length * 2, 64);
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
  /** the bytes as they are (no length prefix) */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /**
   * The written bytes as a plain Uint8Array view of the buffer (no copy: copy it if the writer
   * is reused).
   */
  written(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.pos);
  }

  /** an exact-size copy of bytes [start, pos) */
  copyOut(start = 0): Buffer {
    const n = this.pos - start;
    const out = Buffer.allocUnsafe(n);
    this.buf.copy(out, 0, start, this.pos);
    return out;
  }
}
