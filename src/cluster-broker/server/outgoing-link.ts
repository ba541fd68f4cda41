/**
 * What every link on which the broker sends (a consumer's, a browser's) needs the same way: its
 * delivery tags, and a pause while the connection's output is backed up.
 */
import type { LinkHost } from './link-host.js';

/**
 * Delivery tags of one link: the big-endian float64 of a counter, unique on the link. Each tag is
 * an 8-byte view into a block of tags shared by every link of the process, written once and never
 * again: a view is one small object per delivery, where a copy of its own would add an
 * ArrayBuffer (about twice the heap, and the broker makes one per delivery it sends).
 */
export class DeliveryTags {
  private counter = 0;

  next(): Uint8Array {
    if (tagAt === TAG_BLOCK_BYTES) {
      tagBlock = new Uint8Array(TAG_BLOCK_BYTES);
      tagView = new DataView(tagBlock.buffer);
      tagAt = 0;
    }
    tagView.setFloat64(tagAt, this.counter++);
    tagAt += TAG_BYTES;
    return tagBlock.subarray(tagAt - TAG_BYTES, tagAt);
  }
}

const TAG_BYTES = 8;
/** Tags per block x 8 B: a block lives while any tag in it does (deliveries are short-lived). */
const TAG_BLOCK_BYTES = 512 * TAG_BYTES;
let tagBlock = new Uint8Array(0);
let tagView = new DataView(tagBlock.buffer);
/** Where the next tag goes in the current block (TAG_BLOCK_BYTES: a new block is due). */
let tagAt = TAG_BLOCK_BYTES;

/**
 * Stops a link's pump while the socket holds more unsent output than its high-water mark, and
 * runs `resume` once it drained (memory stays bounded by a slow reader: link-host.ts `congested`).
 */
export class CongestionPause {
  private paused = false;

  constructor(
    private readonly host: LinkHost,
    private readonly resume: () => void,
  ) {}

  /** True when the pump must stop now (a resume is then scheduled, once). */
  holds(): boolean {
    if (!this.host.congested) return false;
    if (!this.paused) {
      this.paused = true;
      this.host.whenWritable(() => {
        this.paused = false;
        this.resume();
      });
    }
    return true;
  }
}
