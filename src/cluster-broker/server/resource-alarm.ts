/**
 * Memory and disk alarms (RabbitMQ's): while the broker's memory is near its limit, or the free
 * space of its data directory's file system is below its minimum, publishers get no more link
 * credit (what they already hold still arrives) and no queue is auto-created; consumers keep
 * draining. When the condition clears, blocked publishers get their credit back.
 *
 * Memory is `memoryInUse()` (heap + buffers), judged every MEMORY_EVERY_MS and every
 * MEMORY_EVERY_BYTES of published messages; the alarm goes on at MEMORY_ALARM_FRACTION of the
 * limit so that what still arrives keeps the process near the limit. Disk free space (statfs,
 * space available to unprivileged users) every DISK_EVERY_MS.
 */
import { statfs } from 'node:fs/promises';
import os from 'node:os';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sharedInterval } from '../../common/shared-interval.js';
import type { BrokerLogger } from './options.js';

const MEMORY_EVERY_MS = 100;
/** Also judged after this many bytes of published messages arrive, so a flood cannot outrun the timer. */
const MEMORY_EVERY_BYTES = 256 * 1024;
/** Garbage is collected once the uncollected figure passes this fraction of the threshold. */
const GC_FRACTION = 0.9;
/** Collections at most this often, and spaced at least 10x their own duration (<= 10% of the time). */
const GC_EVERY_MS = 50;
const GC_SPACING_FACTOR = 10;
/**
 * The memory alarm goes on at this fraction of the limit: credit already granted and garbage not
 * yet collected still arrive on top, and the limit is what the process should stay within.
 */
const MEMORY_ALARM_FRACTION = 0.85;
/** An alarm clears once usage is this far back under its trigger (disk: free space this far above). */
const CLEAR_FRACTION = 0.95;
const DISK_EVERY_MS = 1000;
/** RabbitMQ's vm_memory_high_watermark: 40% of the machine's (or the cgroup's) memory. */
export const DEFAULT_MEMORY_FRACTION = 0.4;
export const DEFAULT_MIN_DISK_FREE = 1024 * 1024 * 1024;

/**
 * A full garbage collection, for the memory alarm only: V8 offers it to code only behind
 * --expose-gc, which can be switched on at run time (a new context then sees `gc`). Undefined
 * where that fails: the alarm then judges the uncollected figure.
 */
const collectGarbage: (() => void) | undefined = (() => {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
})();

/** The machine's memory, or the cgroup's limit when lower (containers). */
export function systemMemory(): number {
  const total = os.totalmem();
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  return constrained !== undefined && constrained > 0 && constrained < total ? constrained : total;
}

/**
 * The default limit never exceeds this fraction of the JavaScript heap V8 allows the process
 * (`heap_size_limit`): on a large machine 40% of memory is more than the heap can hold, and the
 * process would die of "heap out of memory" before the alarm fired. The rest of the heap is room
 * for what arrives while the alarm goes on, and for the collector.
 */
export const HEAP_LIMIT_FRACTION = 0.7;

/** The largest JavaScript heap V8 lets this process use (its --max-old-space-size and friends). */
export function heapSizeLimit(): number {
  return v8.getHeapStatistics().heap_size_limit;
}

/**
 * The memory the broker may use by default: 40% of `systemMemory()`, but at most
 * HEAP_LIMIT_FRACTION of the heap the process can actually have (docs/production.md#limits-by-default).
 */
export function defaultMaxMemory(): number {
  return Math.floor(
    Math.min(systemMemory() * DEFAULT_MEMORY_FRACTION, heapSizeLimit() * HEAP_LIMIT_FRACTION),
  );
}

/**
 * The broker's memory in use, as the memory alarm judges it: the JavaScript heap plus the memory
 * outside it that JavaScript objects hold (message buffers). Not RSS: the allocator keeps pages
 * after messages are gone, so an RSS alarm would never clear once consumers had drained.
 */
export function memoryInUse(): number {
  // the same two figures as process.memoryUsage()'s heapUsed + external, without the RSS read
  // it also makes (a system call: 10-30 us, here on the publish path every 256 KiB)
  const h = v8.getHeapStatistics();
  return h.used_heap_size + h.external_memory;
}

export interface ResourceAlarmOptions {
  /** Bytes; 0 = no memory alarm. */
  maxMemory: number;
  /** Bytes; 0 = no disk alarm. */
  minDiskFree: number;
  /** A directory on the file system to watch; absent = no disk alarm (nothing is written). */
  diskPath: string | undefined;
  logger: BrokerLogger;
}

/** Which resource alarm is raised: memory use or free disk space. */
export type AlarmKind = 'memory' | 'disk';

export class ResourceAlarm {
  private readonly active = new Set<AlarmKind>();
  private readonly waiters = new Set<() => void>();
  private stopMemoryTimer: (() => void) | undefined;
  private stopDiskTimer: (() => void) | undefined;
  private diskBusy = false;
  private lastGcAt = 0;
  private gcSpacingMs = GC_EVERY_MS;
  private ingressBytes = 0;

  constructor(private readonly o: ResourceAlarmOptions) {}

  /** True while an alarm is on: publishers get no credit, no queue is auto-created. */
  get blocked(): boolean {
    return this.active.size > 0;
  }

  /** The alarms that are on. */
  alarms(): AlarmKind[] {
    return [...this.active];
  }

  /** Why the broker is blocked (for refusals), or undefined. */
  get reason(): string | undefined {
    if (!this.blocked) return undefined;
    return [...this.active]
      .map((a) =>
        a === 'memory'
          ? `memory near its limit of ${this.o.maxMemory} bytes`
          : `disk free below ${this.o.minDiskFree} bytes`,
      )
      .join(', ');
  }

  /**
   * May the broker take `bytes` more memory for a while (a store snapshot, a copy of the state)?
   * Not while the memory alarm is on, nor when it would pass the limit. Always with no limit.
   */
  hasRoomFor(bytes: number): boolean {
    if (this.o.maxMemory <= 0) return true;
    return !this.active.has('memory') && memoryInUse() + bytes <= this.o.maxMemory;
  }

  /** Calls `resume` once, when no alarm is on any more. Returns a cancel function. */
  whenClear(resume: () => void): () => void {
    this.waiters.add(resume);
    return () => this.waiters.delete(resume);
  }

  start(): void {
    if (this.o.maxMemory > 0) {
      // on the process's one 100 ms timer (a cluster member's status and watch run there too)
      this.stopMemoryTimer = sharedInterval(MEMORY_EVERY_MS, () => this.checkMemory(), { ref: false });
      this.checkMemory();
    }
    if (this.o.minDiskFree > 0 && this.o.diskPath !== undefined) {
      this.stopDiskTimer = sharedInterval(DISK_EVERY_MS, () => void this.checkDisk(), { ref: false });
      void this.checkDisk();
    }
  }

  stop(): void {
    this.stopMemoryTimer?.();
    this.stopDiskTimer?.();
    this.stopMemoryTimer = undefined;
    this.stopDiskTimer = undefined;
    this.waiters.clear();
  }

  /**
   * Counts published bytes as they arrive (called on the hot path: one addition and a compare);
   * every MEMORY_EVERY_BYTES the memory is judged at once.
   */
  noteIngress(bytes: number): void {
    if (this.o.maxMemory <= 0) return;
    this.ingressBytes += bytes;
    if (this.ingressBytes < MEMORY_EVERY_BYTES) return;
    this.ingressBytes = 0;
    this.checkMemory();
  }

  /**
   * Near the limit, the figure may be garbage V8 has not collected yet (it collects on
   * allocation, and a blocked broker whose consumers drain allocates little): collect it before
   * judging, so an alarm is neither raised on garbage nor kept by it, and garbage does not carry
   * the process past the limit. Collections are spaced so they take at most a tenth of the time.
   */
  private checkMemory(): void {
    // on above the limit, off only below CLEAR_FRACTION of it: GC noise does not flap it
    const trigger = this.o.maxMemory * MEMORY_ALARM_FRACTION;
    const threshold = this.active.has('memory') ? trigger * CLEAR_FRACTION : trigger;
    let used = memoryInUse();
    const now = Date.now();
    if (
      used > threshold * GC_FRACTION &&
      collectGarbage !== undefined &&
      now - this.lastGcAt >= this.gcSpacingMs
    ) {
      collectGarbage();
      const done = Date.now();
      this.lastGcAt = done;
      this.gcSpacingMs = Math.max(GC_EVERY_MS, (done - now) * GC_SPACING_FACTOR);
      used = memoryInUse();
    }
    this.set('memory', used > threshold);
  }

  private async checkDisk(): Promise<void> {
    if (this.diskBusy || this.o.diskPath === undefined) return;
    this.diskBusy = true;
    try {
      const s = await statfs(this.o.diskPath);
      const free = s.bavail * s.bsize;
      const threshold = this.active.has('disk') ? this.o.minDiskFree / CLEAR_FRACTION : this.o.minDiskFree;
      this.set('disk', free < threshold, free);
    } catch (err) {
      this.o.logger.debug?.({ err, path: this.o.diskPath }, 'disk alarm: statfs failed');
    } finally {
      this.diskBusy = false;
    }
  }

  private set(kind: AlarmKind, on: boolean, diskFree?: number): void {
    if (on === this.active.has(kind)) return;
    const detail =
      kind === 'memory'
        ? { memoryBytes: memoryInUse(), maxMemory: this.o.maxMemory }
        : { diskFreeBytes: diskFree, minDiskFree: this.o.minDiskFree, path: this.o.diskPath };
    if (on) {
      this.active.add(kind);
      this.o.logger.warn?.(detail, `${kind} alarm: publishers blocked`);
      return;
    }
    this.active.delete(kind);
    this.o.logger.warn?.(detail, `${kind} alarm cleared`);
    if (this.blocked) return;
    const ws = [...this.waiters];
    this.waiters.clear();
    for (const w of ws) w();
  }
}
