/**
 * The `Buffer` of the browser build (docs/websocket.md#browser), injected by the build wherever
 * the codec names the global `Buffer`: a Uint8Array with the few Node methods the client uses
 * (the codec's fast paths: UTF-8 through `utf8Slice` / `utf8Write`, big-endian reads, `copy`).
 * Anything not listed here does not exist in the browser build; the browser test runs the codec
 * through it end to end.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >>> 1);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** A Uint8Array with the Node Buffer methods the client calls. */
export class Buffer extends Uint8Array {
  static allocUnsafe(size: number): Buffer {
    return new Buffer(size);
  }

  static allocUnsafeSlow(size: number): Buffer {
    return new Buffer(size);
  }

  static alloc(size: number): Buffer {
    return new Buffer(size);
  }

  static isBuffer(value: unknown): value is Buffer {
    return value instanceof Buffer;
  }

  static byteLength(s: string): number {
    return encoder.encode(s).length;
  }

  /** A string (UTF-8, or 'hex'); an ArrayBuffer with offset and length (a view); bytes (a copy). */
  static override from(value: unknown, encodingOrOffset?: unknown, length?: number): Buffer {
    if (typeof value === 'string') {
      const bytes = encodingOrOffset === 'hex' ? hexBytes(value) : encoder.encode(value);
      return new Buffer(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.length);
    }
    if (value instanceof ArrayBuffer)
      return new Buffer(value, (encodingOrOffset as number | undefined) ?? 0, length ?? value.byteLength);
    const bytes = value as ArrayLike<number>;
    const out = new Buffer(bytes.length);
    out.set(bytes);
    return out;
  }

  static concat(list: readonly Uint8Array[], total?: number): Buffer {
    const size = total ?? list.reduce((n, b) => n + b.length, 0);
    const out = new Buffer(size);
    let at = 0;
    for (const b of list) {
      if (at >= size) break;
      const part = b.length <= size - at ? b : b.subarray(0, size - at);
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  /** Copies [sourceStart, sourceEnd) into `target` at `targetStart`; returns the bytes copied. */
  copy(target: Uint8Array, targetStart = 0, sourceStart = 0, sourceEnd = this.length): number {
    const part = this.subarray(sourceStart, Math.min(sourceEnd, sourceStart + target.length - targetStart));
    target.set(part, targetStart);
    return part.length;
  }

  private view(): DataView {
    return new DataView(this.buffer, this.byteOffset, this.byteLength);
  }

  readUInt32BE(at: number): number {
    return this.view().getUint32(at);
  }

  readInt32BE(at: number): number {
    return this.view().getInt32(at);
  }

  readFloatBE(at: number): number {
    return this.view().getFloat32(at);
  }

  readDoubleBE(at: number): number {
    return this.view().getFloat64(at);
  }

  utf8Slice(start: number, end: number): string {
    return decoder.decode(this.subarray(start, end));
  }

  /** Writes `s` as UTF-8 at `offset`, at most `length` bytes; returns the bytes written. */
  utf8Write(s: string, offset: number, length: number): number {
    return encoder.encodeInto(s, this.subarray(offset, offset + length)).written;
  }

  override toString(encoding = 'utf8', start = 0, end = this.length): string {
    const part = this.subarray(start, end);
    if (encoding === 'hex') return Array.from(part, (x) => x.toString(16).padStart(2, '0')).join('');
    return decoder.decode(part);
  }
}
