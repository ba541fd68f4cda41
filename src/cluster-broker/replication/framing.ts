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
 * its header is in, before anything is collected for the body. A frame inside one chunk is passed
 * on as a view of it; a frame that spans chunks is copied once into a buffer of its own size,
 * allocated when its header is in (its bytes copied exactly once, whatever the chunks' sizes:
 * joining the chunks at the end also copied again the tail kept from the chunk before, which
 * showed in a follower's profile).
 */
export class FrameSplitter {
  /** Up to 3 bytes of a header cut by a chunk boundary. */
  private head = Buffer.alloc(4);
  private headHave = 0;
  /** The frame being collected across chunks, with its bytes so far and its fragment bit. */
  private body: Buffer | undefined;
  private bodyHave = 0;
  private bodyMore = false;

  /** `maxFrame` may be raised between frames (after the handshake). */
  constructor(
    public maxFrame: number,
    /** Fragments allowed (after authentication); before, a set top bit is an oversized frame. */
    public allowFragments = false,
  ) {}

  /** Calls `onFrame` for every complete frame; throws ReplicationError on an oversized one. */
  push(chunk: Buffer, onFrame: (payload: Buffer, more: boolean) => void): void {
    let off = 0;
    if (this.body !== undefined) {
      const body = this.body;
      const n = Math.min(chunk.length, body.length - this.bodyHave);
      chunk.copy(body, this.bodyHave, 0, n);
      this.bodyHave += n;
      off = n;
      if (this.bodyHave < body.length) return;
      this.body = undefined;
      onFrame(body, this.bodyMore);
    }
    while (off < chunk.length) {
      let head: number;
      if (this.headHave > 0 || chunk.length - off < 4) {
        // a header cut by a chunk boundary: gather its 4 bytes first
        const n = Math.min(4 - this.headHave, chunk.length - off);
        chunk.copy(this.head, this.headHave, off, off + n);
        this.headHave += n;
        off += n;
        if (this.headHave < 4) return;
        this.headHave = 0;
        head = this.head.readUInt32BE(0);
      } else {
        head = chunk.readUInt32BE(off);
        off += 4;
      }
      const more = this.allowFragments && (head & MORE) !== 0;
      const len = this.allowFragments ? head & LENGTH_MASK : head;
      if (len > this.maxFrame) {
        throw new ReplicationError(
          'amqp:frame-size-too-small',
          `frame of ${len} bytes exceeds ${this.maxFrame}`,
        );
      }
      if (chunk.length - off >= len) {
        onFrame(chunk.subarray(off, off + len), more);
        off += len;
        continue;
      }
      // the length was checked above, before this buffer is sized by it
      const body = Buffer.allocUnsafe(len);
      chunk.copy(body, 0, off);
      this.body = body;
      this.bodyHave = chunk.length - off;
      this.bodyMore = more;
      return;
    }
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
