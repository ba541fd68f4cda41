/**
 * The TCP transport's side of a dialled connection (tcp-transport.ts): its socket and state, and
 * the staging buffer its messages are encoded into between flushes.
 */
import type net from 'node:net';
import { ByteWriter } from '../../common/byte-writer.js';
import type { PeerAddress } from './peer-address.js';

/** First size of a connection's staging buffer, and the largest kept for reuse after a flush. */
const STAGING_FIRST = 64 * 1024;
const STAGING_KEPT = 8 * 1024 * 1024;

/**
 * Where a connection's messages are encoded, framed, back to back: one buffer reused from flush
 * to flush once the socket has written all of it, instead of a buffer per message (fresh memory
 * is far slower to fill than memory already in use). Staged bytes leave as views (`cut`).
 */
export class Staging {
  private w: ByteWriter | undefined;
  /** Start of the staged bytes not cut yet. */
  private cutAt = 0;
  /** What was cut went to the socket: the buffer is reusable once the socket wrote it all. */
  private handedOver = false;

  /** The writer to append to (the same buffer again only when `socket` holds none of it). */
  writer(socket: net.Socket): ByteWriter {
    if (this.w && this.handedOver) {
      this.handedOver = false;
      if (socket.writableLength === 0 && this.w.buf.length <= STAGING_KEPT) {
        this.w.pos = 0;
        this.cutAt = 0;
      } else {
        // still queued in the socket (or too big to keep): leave it to the socket
        this.w = undefined;
      }
    }
    if (this.w === undefined) {
      this.w = new ByteWriter(STAGING_FIRST);
      this.cutAt = 0;
    }
    return this.w;
  }

  /** The bytes staged since the last cut up to `end` (default: all), as a view; empty: undefined. */
  cut(end = this.w?.pos ?? 0): Buffer | undefined {
    const w = this.w;
    if (w === undefined || end <= this.cutAt) return undefined;
    const bytes = w.buf.subarray(this.cutAt, end);
    this.cutAt = end;
    return bytes;
  }

  /** Skip the staged bytes up to the writer's position (they left as views of their own). */
  skip(): void {
    if (this.w) this.cutAt = this.w.pos;
  }

  /** The cut bytes were handed to the socket. */
  handed(): void {
    this.handedOver = true;
  }

  /** The connection is gone: start afresh on the next one. */
  drop(): void {
    this.w = undefined;
    this.cutAt = 0;
    this.handedOver = false;
  }
}

export class Outbound {
  socket: net.Socket | undefined;
  /** Authenticated: messages may go out. */
  connected = false;
  /** Chunks waiting for the next flush, in order (the staging writer's bytes join at the flush). */
  pending: Buffer[] = [];
  flushScheduled = false;
  /** When the pending flush was scheduled (performance.now()). */
  flushScheduledAt = 0;
  /** Where this turn's messages are encoded (codecs with encodeInto). */
  readonly staging = new Staging();
  /** Failed dials since the last authenticated connection: the backoff's exponent. */
  failures = 0;
  timer: NodeJS.Timeout | undefined;
  constructor(
    readonly peer: string,
    readonly addr: PeerAddress,
  ) {}
}
