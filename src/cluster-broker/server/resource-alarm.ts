/**
 * Memory and disk alarms (RabbitMQ's): while the broker's memory is above its limit, or the free
 * space of its data directory's file system is below its minimum, publishers get no more link
 * credit (what they already hold still arrives) and no queue is auto-created; consumers keep
 * draining. When the condition clears, blocked publishers get their credit back.
 *
 * Memory is the process's resident set (RSS, what the OS charges for it), sampled every
 * MEMORY_EVERY_MS; disk free space (statfs, space available to unprivileged users) every
 * DISK_EVERY_MS.
 */
import { statfs } from 'node:fs/promises';
import os from 'node:os';
import type { BrokerLogger } from './options.js';

const MEMORY_EVERY_MS = 100;
const DISK_EVERY_MS = 1000;
/** RabbitMQ's vm_memory_high_watermark: 40% of the machine's (or the cgroup's) memory. */
export const DEFAULT_MEMORY_FRACTION = 0.4;
export const DEFAULT_MIN_DISK_FREE = 1024 * 1024 * 1024;

/** The machine's memory, or the cgroup's limit when lower (containers). */
export function systemMemory(): number {
  const total = os.totalmem();
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  return constrained !== undefined && constrained > 0 && constrained < total ? constrained : total;
}

/** The memory the broker may use by default: 40% of `systemMemory()`. */
export function defaultMaxMemory(): number {
  return Math.floor(systemMemory() * DEFAULT_MEMORY_FRACTION);
}

/** The broker's memory in use, as the memory alarm judges it. */
export function memoryInUse(): number {
  return process.memoryUsage.rss();
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

export type AlarmKind = 'memory' | 'disk';

export class ResourceAlarm {
  private readonly active = new Set<AlarmKind>();
  private readonly waiters = new Set<() => void>();
  private memoryTimer: NodeJS.Timeout | undefined;
  private diskTimer: NodeJS.Timeout | undefined;
  private diskBusy = false;

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
          ? `memory above ${this.o.maxMemory} bytes`
          : `disk free below ${this.o.minDiskFree} bytes`,
      )
      .join(', ');
  }

  /** Calls `resume` once, when no alarm is on any more. Returns a cancel function. */
  whenClear(resume: () => void): () => void {
    this.waiters.add(resume);
    return () => this.waiters.delete(resume);
  }

  start(): void {
    if (this.o.maxMemory > 0) {
      this.memoryTimer = setInterval(
        () => this.set('memory', memoryInUse() > this.o.maxMemory),
        MEMORY_EVERY_MS,
      );
      this.memoryTimer.unref();
      this.set('memory', memoryInUse() > this.o.maxMemory);
    }
    if (this.o.minDiskFree > 0 && this.o.diskPath !== undefined) {
      this.diskTimer = setInterval(() => void this.checkDisk(), DISK_EVERY_MS);
      this.diskTimer.unref();
      void this.checkDisk();
    }
  }

  stop(): void {
    if (this.memoryTimer) clearInterval(this.memoryTimer);
    if (this.diskTimer) clearInterval(this.diskTimer);
    this.memoryTimer = undefined;
    this.diskTimer = undefined;
    this.waiters.clear();
  }

  private async checkDisk(): Promise<void> {
    if (this.diskBusy || this.o.diskPath === undefined) return;
    this.diskBusy = true;
    try {
      const s = await statfs(this.o.diskPath);
      this.set('disk', s.bavail * s.bsize < this.o.minDiskFree, s.bavail * s.bsize);
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
