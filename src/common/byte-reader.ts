/**
 * The bounds-checked reader under our own binary layouts (the broker's events, snapshots and
 * entries, the replication wire): big-endian numbers from one buffer, and a read past its end
 * throws the error its layout names, so each layout keeps its own error class.
 */
export class ByteReader {
  pos: number;
  protected readonly view: DataView;

  constructor(
    protected readonly buf: Uint8Array,
    /** the error a read past the end throws */
    private readonly truncated: () => Error,
    offset = 0,
  ) {
    this.pos = offset;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** Bytes not read yet. */
  get remaining(): number {
    return this.buf.length - this.pos;
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos);
    this.pos += 8;
    return v;
  }

  /** The next `n` bytes as a view of the buffer (no copy). */
  take(n: number): Uint8Array {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  protected need(n: number): void {
    if (this.pos + n > this.buf.length) throw this.truncated();
  }
}
