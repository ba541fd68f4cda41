/**
 * Incremental frame reader: push chunks split anywhere, pull whole frames.
 * A frame that lies inside one chunk is decoded in place (payload is a view of that chunk);
 * only a frame split across chunks is copied, once, into a buffer of exactly its size.
 * After an error the reader stays failed and rethrows it.
 */
import { AmqpDecodeError } from '../errors.js';
import type { Frame, ProtocolId } from './contract.js';
import {
  decodeFrame,
  framingError,
  MIN_MAX_FRAME_SIZE,
  parseProtocolHeader,
  ReusedTransferFrame,
} from './frames.js';

export interface ProtocolHeaderFrame {
  kind: 'protocol-header';
  id: ProtocolId;
  major: number;
  minor: number;
  revision: number;
}

export interface FrameReaderOptions {
  /** the largest frame accepted; 512 (MIN-MAX-FRAME-SIZE) until the engine raises it */
  maxFrameSize?: number;
  /**
   * @internal Every transfer frame is the same object, filled anew by the next `next()`
   * (frames.ts ReusedTransferFrame): for a caller done with each frame before it reads the next
   * and that keeps no frame, performative or transfer body (the engine without a frame trace).
   */
  reuseTransferFrames?: boolean;
}

export class FrameReader {
  private chunks: Uint8Array[] = [];
  /** read offset into chunks[0] */
  private offset = 0;
  private available = 0;
  private maxFrameSize: number;
  private headerExpected = false;
  private failed: AmqpDecodeError | undefined;
  private readonly reusedTransfer: ReusedTransferFrame | undefined;

  constructor(opts: FrameReaderOptions = {}) {
    this.maxFrameSize = opts.maxFrameSize ?? MIN_MAX_FRAME_SIZE;
    this.reusedTransfer = opts.reuseTransferFrames === true ? new ReusedTransferFrame() : undefined;
  }

  /** accept frames up to n bytes (n >= 512) from now on */
  setMaxFrameSize(n: number): void {
    if (!Number.isInteger(n) || n < MIN_MAX_FRAME_SIZE)
      throw new AmqpDecodeError('amqp:frame-size-too-small', `max frame size ${n} < ${MIN_MAX_FRAME_SIZE}`);
    this.maxFrameSize = n;
  }
  getMaxFrameSize(): number {
    return this.maxFrameSize;
  }

  /** the next 8 bytes are a protocol header */
  expectProtocolHeader(): void {
    this.headerExpected = true;
  }

  /** bytes buffered and not yet returned as frames */
  get buffered(): number {
    return this.available;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.available += chunk.length;
  }

  /** the next whole frame, or undefined if more bytes are needed; throws AmqpDecodeError */
  next(): Frame | ProtocolHeaderFrame | undefined {
    if (this.failed !== undefined) throw this.failed;
    try {
      return this.read();
    } catch (e) {
      this.failed =
        e instanceof AmqpDecodeError ? e : new AmqpDecodeError('amqp:decode-error', String(e), { cause: e });
      throw this.failed;
    }
  }

  private read(): Frame | ProtocolHeaderFrame | undefined {
    if (this.headerExpected) {
      if (this.available < 8) return undefined;
      const bytes = this.take(8);
      const start = this.takenAt;
      const h = parseProtocolHeader(bytes.subarray(start, start + 8));
      this.headerExpected = false;
      return { kind: 'protocol-header', ...h };
    }
    if (this.available < 8) return undefined;
    const size = this.peekSize();
    if (size < 8) throw framingError(`frame size ${size} < 8`);
    if (size > this.maxFrameSize)
      throw framingError(`frame size ${size} exceeds max frame size ${this.maxFrameSize}`);
    if (this.available < size) return undefined;
    const bytes = this.take(size);
    const start = this.takenAt;
    return decodeFrame(bytes, start, size, this.reusedTransfer);
  }

  private peekSize(): number {
    const first = this.chunks[0];
    const o = this.offset;
    if (first.length - o >= 4) {
      return ((first[o] << 24) | (first[o + 1] << 16) | (first[o + 2] << 8) | first[o + 3]) >>> 0;
    }
    let size = 0;
    let ci = 0;
    let pos = o;
    for (let i = 0; i < 4; i++) {
      while (pos >= this.chunks[ci].length) {
        ci++;
        pos = 0;
      }
      size = size * 256 + this.chunks[ci][pos++];
    }
    return size;
  }

  /** where the bytes returned by the last `take` start */
  private takenAt = 0;

  /** consume n bytes: the first chunk itself (from `takenAt`) when they lie in it, else one exact copy */
  private take(n: number): Uint8Array {
    const first = this.chunks[0];
    this.available -= n;
    if (first.length - this.offset >= n) {
      const start = this.offset;
      this.offset += n;
      if (this.offset === first.length) {
        this.chunks.shift();
        this.offset = 0;
      }
      this.takenAt = start;
      return first;
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0];
      const k = Math.min(n - filled, c.length - this.offset);
      out.set(c.subarray(this.offset, this.offset + k), filled);
      filled += k;
      this.offset += k;
      if (this.offset === c.length) {
        this.chunks.shift();
        this.offset = 0;
      }
    }
    this.takenAt = 0;
    return out;
  }
}
