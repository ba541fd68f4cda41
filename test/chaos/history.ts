/**
 * The history a chaos run records: every client operation as invoke / ok / fail / info, in the
 * record shape `checker.ts` reads (times in ms since the run started).
 */
import type { HistoryOp, QueueValue } from './checker.js';

export class History {
  readonly ops: HistoryOp[] = [];
  /** set once the final drain starts: later dequeues are marked `final` */
  draining = false;

  /** `t0`: another history's, so that both share one clock (and the nemesis log's) */
  constructor(readonly t0: number = performance.now()) {}

  /** ms since the run started */
  now(): number {
    return Math.round((performance.now() - this.t0) * 1000) / 1000;
  }

  invokeEnqueue(process: string, value: QueueValue): void {
    this.ops.push({ process, type: 'invoke', f: 'enqueue', value, time: this.now() });
  }

  completeEnqueue(process: string, type: 'ok' | 'fail' | 'info', value: QueueValue): void {
    this.ops.push({ process, type, f: 'enqueue', value, time: this.now() });
  }

  /**
   * A message handed to the application. The record is returned so its `acceptConfirmed` can be
   * set when accept() resolves (it stays false while the accept is in doubt).
   */
  dequeue(process: string, value: QueueValue): HistoryOp {
    const op: HistoryOp = {
      process,
      type: 'ok',
      f: 'dequeue',
      value,
      time: this.now(),
      acceptConfirmed: false,
    };
    if (this.draining) op.final = true;
    this.ops.push(op);
    return op;
  }

  count(type: HistoryOp['type'], f: HistoryOp['f']): number {
    let n = 0;
    for (const op of this.ops) if (op.type === type && op.f === f) n++;
    return n;
  }
}
