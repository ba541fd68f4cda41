import type { Socket } from 'node:net';

/**
 * One direction of a proxied connection: copies chunks from `source` to `sink`, holding each
 * chunk back by the current delay. Chunks leave in the order they arrived even when the delay
 * shrinks meanwhile (a later chunk never overtakes an earlier one), because a TCP stream that
 * reorders bytes is corruption, not latency.
 */
export interface DelayedPipeHooks {
  /** Current per-chunk delay in ms (read per chunk so `setDelay` applies to new data at once). */
  delayMs(): number;
  /** Called per received chunk; returning false means "reset the connection now, drop it". */
  admit(chunk: Buffer): boolean;
  /** Called with the byte count of each chunk written to the sink. */
  forwarded(bytes: number): void;
}

interface PendingChunk {
  chunk: Buffer;
  dueAt: number;
}

export class DelayedPipe {
  private readonly queue: PendingChunk[] = [];
  private held = 0;
  private timer: NodeJS.Timeout | undefined;
  private sourceEnded = false;
  private stalled = false;

  constructor(
    private readonly source: Socket,
    private readonly sink: Socket,
    private readonly hooks: DelayedPipeHooks,
  ) {
    source.on('data', (chunk: Buffer) => this.onData(chunk));
    source.on('end', () => {
      this.sourceEnded = true;
      this.endSinkIfDrained();
    });
    sink.on('drain', () => {
      if (!this.stalled) source.resume();
    });
  }

  /** Stop forwarding (black-holed link): keep nothing moving until the connection is destroyed. */
  stall(): void {
    this.stalled = true;
    this.source.pause();
    this.clearTimer();
  }

  dispose(): void {
    this.clearTimer();
    this.queue.length = 0;
    this.held = 0;
  }

  /** Bytes received and not yet forwarded because of the delay. */
  get heldBytes(): number {
    return this.held;
  }

  private onData(chunk: Buffer): void {
    if (this.stalled) return;
    if (!this.hooks.admit(chunk)) return;
    const delay = this.hooks.delayMs();
    if (delay <= 0 && this.queue.length === 0) {
      this.write(chunk);
      return;
    }
    this.queue.push({ chunk, dueAt: Date.now() + Math.max(0, delay) });
    this.held += chunk.length;
    this.schedule();
  }

  private write(chunk: Buffer): void {
    if (this.sink.destroyed) return;
    this.hooks.forwarded(chunk.length);
    if (!this.sink.write(chunk)) this.source.pause();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.queue.length === 0 || this.stalled) return;
    const wait = Math.max(0, this.queue[0]!.dueAt - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushDue();
    }, wait);
  }

  private flushDue(): void {
    const now = Date.now();
    while (this.queue.length > 0 && this.queue[0]!.dueAt <= now && !this.stalled) {
      const { chunk } = this.queue.shift()!;
      this.held -= chunk.length;
      this.write(chunk);
    }
    this.schedule();
    this.endSinkIfDrained();
  }

  private endSinkIfDrained(): void {
    if (this.sourceEnded && this.queue.length === 0 && !this.stalled && !this.sink.destroyed) this.sink.end();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
