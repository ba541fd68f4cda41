/**
 * The byte writer and reader of the broker's own binary layouts
 * (events and snapshots). Integers are unsigned LEB128 varints; times are float64 (ms);
 * strings are UTF-8 with a varint length. Hand-rolled because events carry large message bodies
 * that must never be base64'd or JSON'd.
 */

import { ByteReader } from '../../common/byte-reader.js';
import { ByteWriter } from '../../common/byte-writer.js';
import { utf8Slice } from '../../common/utf8-slice.js';
import { AmqpEncodeError, AmqpError } from '../../errors.js';
import type { RepeatedString } from './repeated-string.js';

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
    this.pos = putVarint(this.buf, this.pos, v);
  }

  bytes(v: Uint8Array): void {
    this.uint(v.length);
    this.raw(v);
  }

  /**
   * What `bytes()` of the output of `write` would write, without a buffer of its own for that
   * output: `write` writes here, after room for the length prefix guessed from `sizeHint`, and the
   * written bytes move (memmove) only when the guess was wrong.
   */
  prefixed(sizeHint: number, write: () => void): void {
    const guess = varintSize(sizeHint);
    this.ensure(guess);
    const start = this.pos;
    this.pos += guess;
    write();
    const end = this.pos;
    const length = end - start - guess;
    const need = varintSize(length);
    if (need !== guess) {
      this.ensure(need - guess);
      this.buf.copyWithin(start + need, start + guess, end);
    }
    putVarint(this.buf, start, length); // into the room made above
    this.pos = end + need - guess;
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

/** Writes the unsigned varint of `v` at `at` (room already made); returns the position after it. */
function putVarint(buf: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    buf[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[at++] = v;
  return at;
}

/** Bytes of the unsigned varint of `v`. */
function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
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

/** What a read past the end throws: one function for every reader, not a closure per reader. */
const truncatedInput = (): Error => new ByteReaderError('truncated input');

/** The common ByteReader with the broker layouts' own encodings (varints, varint-length strings). */
export class VarintReader extends ByteReader {
  constructor(buf: Uint8Array, offset = 0) {
    // a reader is made per replicated entry on every member
    super(buf, truncatedInput, offset);
  }

  get offset(): number {
    return this.pos;
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

  /** A view into the source buffer: copy it before keeping it (it pins the whole source). */
  bytesView(): Uint8Array {
    return this.take(this.uint());
  }

  /** A copy the caller owns (its own ArrayBuffer, so it never pins the source buffer). */
  bytesCopy(): Uint8Array {
    return this.take(this.uint()).slice();
  }

  str(): string {
    return this.text(this.uint());
  }

  /** str(), giving `last`'s string again when the bytes are the same (no new string). */
  strRepeated(last: RepeatedString): string {
    const n = this.uint();
    this.need(n);
    const start = this.pos;
    const kept = last.lookup(this.buf, start, n);
    if (kept !== undefined) {
      this.pos = start + n;
      return kept;
    }
    const s = this.text(n);
    last.remember(this.buf, start, n, s);
    return s;
  }

  /** The UTF-8 string of the next `n` bytes. */
  private text(n: number): string {
    this.need(n);
    const start = this.pos;
    this.pos += n;
    const s = utf8Slice(this.buf, start, this.pos);
    // utf8Slice turns invalid UTF-8 into U+FFFD and keeps a leading BOM, where this layout
    // refuses the one and drops the other (the TextDecoder's way): both rare, both left to it
    if (s.charCodeAt(0) !== 0xfeff && !s.includes('\uFFFD')) return s;
    try {
      return textDecoder.decode(this.buf.subarray(start, this.pos));
    } catch {
      throw new ByteReaderError('invalid UTF-8 in a string');
    }
  }

  end(): void {
    if (this.pos !== this.buf.length) throw new ByteReaderError('trailing bytes');
  }
}
