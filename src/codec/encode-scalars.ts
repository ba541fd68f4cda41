/**
 * Primitive writers: one per fixed- and variable-width AMQP type (null, booleans, integers,
 * double, timestamp, string, symbol, binary), each choosing the most compact constructor.
 */
import { AmqpEncodeError } from '../errors.js';
import type { Writer } from './writer.js';

const MAX_U32 = 0xffffffff;

export function writeNull(w: Writer): void {
  w.u8(0x40);
}
export function writeBoolean(w: Writer, v: boolean): void {
  w.u8(v ? 0x41 : 0x42);
}
export function writeUint(w: Writer, v: number): void {
  if (v === 0) w.u8(0x43);
  else if (v < 256 && v > 0) {
    w.ensure(2);
    w.buf[w.pos++] = 0x52;
    w.buf[w.pos++] = v;
  } else {
    if (!(v >= 0 && v <= MAX_U32 && Number.isInteger(v)))
      throw new AmqpEncodeError(`uint out of range: ${v}`);
    w.u8(0x70);
    w.u32(v);
  }
}
export function writeUlong(w: Writer, v: number | bigint): void {
  if (typeof v === 'bigint') {
    if (v < 0n || v > 0xffffffffffffffffn) throw new AmqpEncodeError(`ulong out of range: ${v}`);
    if (v <= BigInt(Number.MAX_SAFE_INTEGER)) {
      writeUlong(w, Number(v));
      return;
    }
    w.u8(0x80);
    w.i64(v);
    return;
  }
  if (v === 0) w.u8(0x44);
  else if (v < 256 && v > 0 && Number.isInteger(v)) {
    w.ensure(2);
    w.buf[w.pos++] = 0x53;
    w.buf[w.pos++] = v;
  } else {
    if (!(v >= 0 && Number.isSafeInteger(v))) throw new AmqpEncodeError(`ulong out of range: ${v}`);
    w.u8(0x80);
    w.i64(v);
  }
}
export function checkRange(type: string, v: number, min: number, max: number): void {
  if (!(v >= min && v <= max && Number.isInteger(v))) throw new AmqpEncodeError(`${type} out of range: ${v}`);
}
export function writeUbyte(w: Writer, v: number): void {
  checkRange('ubyte', v, 0, 0xff);
  w.u8(0x50);
  w.u8(v);
}
export function writeUshort(w: Writer, v: number): void {
  checkRange('ushort', v, 0, 0xffff);
  w.u8(0x60);
  w.u16(v);
}
export function writeInt(w: Writer, v: number): void {
  if (v >= -128 && v <= 127) {
    w.ensure(2);
    w.buf[w.pos++] = 0x54;
    w.buf[w.pos++] = v & 0xff;
  } else {
    w.u8(0x71);
    w.i32(v);
  }
}
export function writeLong(w: Writer, v: number | bigint): void {
  if (typeof v === 'bigint') {
    if (v < -0x8000000000000000n || v > 0x7fffffffffffffffn)
      throw new AmqpEncodeError(`long out of range: ${v}`);
    if (v >= -128n && v <= 127n) {
      writeLong(w, Number(v));
      return;
    }
  } else if (v >= -128 && v <= 127) {
    w.u8(0x55);
    w.u8(v & 0xff);
    return;
  } else if (!Number.isSafeInteger(v)) throw new AmqpEncodeError(`long out of range: ${v}`);
  w.u8(0x81);
  w.i64(v);
}
export function writeDouble(w: Writer, v: number): void {
  w.u8(0x82);
  w.f64(v);
}
export function writeTimestamp(w: Writer, v: Date): void {
  const t = v.getTime();
  if (!Number.isSafeInteger(t)) throw new AmqpEncodeError('invalid Date');
  w.u8(0x83);
  w.i64(t);
}

/** variable-width: str8/str32 etc. `code8` is 0xa1 (string) or 0xa3 (symbol) */
export function writeStringCode(w: Writer, s: string, code8: number): void {
  const n = s.length;
  if (n <= 85) {
    w.ensure(2 + n * 3);
    const at = w.pos;
    const b = w.buf;
    // short ASCII strings: a JS loop beats the native call
    let len = n;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        len = w.utf8At(s, at + 2);
        break;
      }
      b[at + 2 + i] = c;
    }
    w.buf[at] = code8;
    w.buf[at + 1] = len;
    w.pos = at + 2 + len;
    return;
  }
  w.ensure(5 + n * 3);
  const at = w.pos;
  const len = n > 255 ? w.utf8At(s, at + 5) : Buffer.byteLength(s);
  if (len <= 255) {
    w.buf[at] = code8;
    w.buf[at + 1] = len;
    w.utf8At(s, at + 2);
    w.pos = at + 2 + len;
  } else {
    if (n <= 255) w.utf8At(s, at + 5);
    w.buf[at] = code8 + 0x10;
    w.view.setUint32(at + 1, len);
    w.pos = at + 5 + len;
  }
}
export function writeString(w: Writer, s: string): void {
  writeStringCode(w, s, 0xa1);
}
export function writeSymbol(w: Writer, s: string): void {
  writeStringCode(w, s, 0xa3);
}
export function writeBinary(w: Writer, b: Uint8Array): void {
  const n = b.length;
  if (n <= 255) {
    w.ensure(2 + n);
    w.buf[w.pos++] = 0xa0;
    w.buf[w.pos++] = n;
  } else {
    w.ensure(5 + n);
    w.buf[w.pos++] = 0xb0;
    w.view.setUint32(w.pos, n);
    w.pos += 4;
  }
  w.buf.set(b, w.pos);
  w.pos += n;
}
