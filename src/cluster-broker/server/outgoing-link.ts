/**
 * What every link on which the broker sends (a consumer's, a browser's) needs the same way: its
 * delivery tags, and a pause while the connection's output is backed up.
 */
import type { LinkHost } from './link-host.js';

/** Delivery tags of one link: the big-endian float64 of a counter, unique on the link. */
export class DeliveryTags {
  private counter = 0;

  next(): Uint8Array {
    TAG_VIEW.setFloat64(0, this.counter++);
    return TAG_SCRATCH.slice(); // one allocation per delivery, not a buffer and a view
  }
}

/** Where a delivery tag is written before it is copied out. */
const TAG_SCRATCH = new Uint8Array(8);
const TAG_VIEW = new DataView(TAG_SCRATCH.buffer);

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
