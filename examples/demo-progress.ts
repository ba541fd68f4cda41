/**
 * Live progress for the demo: on a TTY one redrawn status line with a progress bar; otherwise
 * a plain line every few seconds, so logs and CI output stay readable.
 */
import type { WriteStream } from 'node:tty';

export interface ProgressSnapshot {
  elapsedMs: number;
  sent: number;
  acknowledged: number;
  /** distinct messages received: one count, or one per place (the topic demo's subscriptions) */
  received: number | Record<string, number>;
  duplicates: number;
  kills: number;
  failovers: number;
}

export class DemoProgress {
  private readonly tty: boolean;
  private lastPlain = 0;
  private drawn = false;

  constructor(
    private readonly out: NodeJS.WriteStream | WriteStream,
    private readonly totalMs: number,
  ) {
    this.tty = Boolean((out as WriteStream).isTTY);
  }

  /** A message line (kills, failovers), printed above the status line. */
  line(text: string): void {
    if (this.tty && this.drawn) this.out.write('\r\x1b[2K');
    this.out.write(`${text}\n`);
    this.drawn = false;
  }

  update(s: ProgressSnapshot): void {
    const received =
      typeof s.received === 'number'
        ? String(s.received)
        : Object.entries(s.received)
            .map(([where, n]) => `${where} ${n}`)
            .join(' ');
    const counters = `sent ${s.sent}  acked ${s.acknowledged}  received ${received}  dup ${s.duplicates}  kills ${s.kills}  failovers ${s.failovers}`;
    if (this.tty) {
      const width = 24;
      const filled = Math.min(width, Math.round((s.elapsedMs / this.totalMs) * width));
      const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
      this.out.write(`\r\x1b[2K${bar} ${Math.round(s.elapsedMs / 1000)}s  ${counters}`);
      this.drawn = true;
    } else if (s.elapsedMs - this.lastPlain >= 5000) {
      this.lastPlain = s.elapsedMs;
      this.out.write(`${Math.round(s.elapsedMs / 1000)}s  ${counters}\n`);
    }
  }

  done(): void {
    if (this.tty && this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}
