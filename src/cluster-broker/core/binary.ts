/**
 * The byte writer and bounds-checked reader for the broker's own binary layouts
 * (events and snapshots). Integers are unsigned LEB128 varints; times are float64 (ms);
 * strings are UTF-8 with a varint length. Hand-rolled because events carry large message bodies
 * that must never be base64'd or JSON'd.
 */

import { ByteWriter } from '../../common/byte-writer.js';
import { AmqpEncodeError, AmqpError } from '../../errors.js';

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The common ByteWriter with the broker layouts' own encodings: varint integers, varint-length
 * byte strings and UTF-8 strings.
 */
export class VarintWriter extends ByteWriter {
  /** Unsigned varint for non-negative safe integers. */
  uint(v: number): void {
    if (!Number.isSafeInteger(v) || v < 0) throw new AmqpEncodeError(`not a non-negative safe integer: ${v}`);
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  bytes(v: Uint8Array): void {
    this.uint(v.length);
    this.raw(v);
  }

  str(v: string): void {
    // Worst case 3 bytes per UTF-16 unit; encodeInto avoids an intermediate array.
    const max = v.length * 3;
    this.ensure(max + 5);
    if (v.length < 128 && isAscii(v)) {
      this.buf[this.pos++] = v.length;
      for (let i = 0; i < v.length; i++) this.buf[this.pos++] = v.charCodeAt(i);
      return;
    }
    const encoded = textEncoder.encode(v);
    this.bytes(encoded);
  }

  /** The written bytes (a view of the internal buffer: copy if the writer is reused). */
  finish(): Uint8Array {
    return this.written();
  }
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Bytes of the broker's own layouts (events, snapshots) that do not decode: 'amqp:decode-error'. */
export class ByteReaderError extends AmqpError {
  constructor(description: string) {
    super('amqp:decode-error', description);
    this.name = 'ByteReaderError';
  }
}

export class ByteReader {
  private pos: number;
  private readonly view: DataView;

  constructor(
    private readonly buf: Uint8Array,
    offset = 0,
  ) {
    this.pos = offset;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new ByteReaderError('truncated input');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  uint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 0x80;
    }
    throw new ByteReaderError('varint too long');
  }

  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, false);
    this.pos += 8;
    return v;
  }

  /** A copy the caller owns (its own ArrayBuffer, so it never pins the source buffer). */
  bytesCopy(): Uint8Array {
    const n = this.uint();
    this.need(n);
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  str(): string {
    const n = this.uint();
    this.need(n);
    let s: string;
    try {
      s = textDecoder.decode(this.buf.subarray(this.pos, this.pos + n));
    } catch {
      throw new ByteReaderError('invalid UTF-8 in a string');
    }
    this.pos += n;
    return s;
  }

  end(): void {
    if (this.pos !== this.buf.length) throw new ByteReaderError('trailing bytes');
  }
}
