/**
 * The bounds-checked reader under our own binary layouts (the broker's events, snapshots and
 * entries, the replication wire): big-endian numbers from one buffer, and a read past its end
 * throws the error its layout names, so each layout keeps its own error class.
 */
/** Where f64 reads its eight bytes (one for all readers: reads never interleave). */
const scratchBytes = new Uint8Array(8);
const scratch = new DataView(scratchBytes.buffer);

export class ByteReader {
  pos: number;

  constructor(
    protected readonly buf: Uint8Array,
    /** the error a read past the end throws */
    private readonly truncated: () => Error,
    offset = 0,
  ) {
    // no DataView of its own: a reader is made per replicated entry, on every member
    this.pos = offset;
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
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
  }

  f64(): number {
    this.need(8);
    const b = this.buf;
    const p = this.pos;
    for (let i = 0; i < 8; i++) scratchBytes[i] = b[p + i]!;
    this.pos = p + 8;
    return scratch.getFloat64(0);
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
