/**
 * Framing on member-to-member connections: u32 big-endian header + payload.
 *
 * The header's low 31 bits are the payload length; its top bit says "more fragments of this
 * message follow". A message larger than one frame (a snapshot, an append carrying a large
 * entry) is cut into fragments, so no frame ever exceeds `MEMBER_MAX_FRAME` and a receiver never
 * allocates more for one frame than that, whatever a header claims. Before a connection is
 * authenticated the receiver's limit is the handshake's (a few hundred bytes).
 */
import { ReplicationError } from './errors.js';

/** Largest frame payload after authentication: one fragment of a message (1 MiB). */
export const MEMBER_MAX_FRAME = 1024 * 1024;

const MORE = 0x8000_0000;
const LENGTH_MASK = 0x7fff_ffff;

/**
 * Splits a byte stream into frames. The length is checked against the current limit as soon as
 * its header is in, before anything is collected for the body; chunks of a large frame are
 * joined once, when the whole frame is there.
 */
export class FrameSplitter {
  private chunks: Buffer[] = [];
  private total = 0;
  /** Bytes needed before the next frame can be cut (header, then header + body). */
  private needed = 4;

  /** `maxFrame` may be raised between frames (after the handshake). */
  constructor(
    public maxFrame: number,
    /** Fragments allowed (after authentication); before, a set top bit is an oversized frame. */
    public allowFragments = false,
  ) {}

  /** Calls `onFrame` for every complete frame; throws ReplicationError on an oversized one. */
  push(chunk: Buffer, onFrame: (payload: Buffer, more: boolean) => void): void {
    this.chunks.push(chunk);
    this.total += chunk.length;
    if (this.total < this.needed) return;
    let buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.total);
    let off = 0;
    for (;;) {
      const avail = buf.length - off;
      if (avail < 4) {
        this.needed = 4;
        break;
      }
      const head = buf.readUInt32BE(off);
      const more = this.allowFragments && (head & MORE) !== 0;
      const len = this.allowFragments ? head & LENGTH_MASK : head;
      if (len > this.maxFrame) {
        throw new ReplicationError(
          'amqp:frame-size-too-small',
          `frame of ${len} bytes exceeds ${this.maxFrame}`,
        );
      }
      if (avail - 4 < len) {
        this.needed = 4 + len;
        break;
      }
      onFrame(buf.subarray(off + 4, off + 4 + len), more);
      off += 4 + len;
    }
    buf = buf.subarray(off);
    this.chunks = buf.length > 0 ? [buf] : [];
    this.total = buf.length;
  }
}

/** One frame (header + payload view, no copy of the payload). */
export function frame(payload: Uint8Array): Buffer[] {
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32BE(payload.length, 0);
  return [head, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)];
}

/** A message as frames of at most `maxFrame` payload bytes each (views, no copy). */
export function fragments(payload: Uint8Array, maxFrame = MEMBER_MAX_FRAME): Buffer[] {
  if (payload.length <= maxFrame) return frame(payload);
  const out: Buffer[] = [];
  for (let off = 0; off < payload.length; off += maxFrame) {
    const end = Math.min(off + maxFrame, payload.length);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32BE(((end - off) | (end < payload.length ? MORE : 0)) >>> 0, 0);
    out.push(head, Buffer.from(payload.buffer, payload.byteOffset + off, end - off));
  }
  return out;
}

/** Joins the fragments of one message; refuses a message larger than `maxMessage`. */
export class Reassembler {
  private parts: Buffer[] = [];
  private total = 0;
  constructor(private readonly maxMessage: number) {}

  /** The whole message once its last fragment is in, else undefined. */
  push(payload: Buffer, more: boolean): Buffer | undefined {
    if (this.parts.length === 0 && !more) return payload;
    this.total += payload.length;
    if (this.total > this.maxMessage) {
      throw new ReplicationError('amqp:frame-size-too-small', `message exceeds ${this.maxMessage} bytes`);
    }
    // a view into a socket chunk, which nothing overwrites: no copy until the final join
    this.parts.push(payload);
    if (more) return undefined;
    const whole = Buffer.concat(this.parts, this.total);
    this.parts = [];
    this.total = 0;
    return whole;
  }
}
