/** "AMQP": the first word of an 8-byte protocol header, not of a frame. */
export const AMQP_MAGIC = 0x414d5150;

/** Splits a byte stream into protocol headers and whole frames, as raw byte ranges. */
export class FrameSplitter {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const units: Buffer[] = [];
    for (;;) {
      if (this.buf.length < 8) break;
      const size = this.buf.readUInt32BE(0) === AMQP_MAGIC ? 8 : this.buf.readUInt32BE(0);
      if (size < 8 || this.buf.length < size) break;
      units.push(this.buf.subarray(0, size));
      this.buf = this.buf.subarray(size);
    }
    return units;
  }
}
