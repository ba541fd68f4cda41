/**
 * The adapter loop around one ProtocolConnection, the one both roles run (README.md "The adapter
 * loop"): the engine never touches a socket or a clock, this does.
 *
 * - `EngineDriver`: output is coalesced (a flush is only scheduled; the flush takes every pending
 *   frame and hands them to the output as one batch), a timer follows engine.nextDeadline() for
 *   heartbeats and the idle timeout, and the output is ended once the engine closed. It writes to
 *   an `EngineOutput`: a socket, or memory in the broker's in-process tests.
 * - `SocketPort`: a connected stream (net, tls, or a user's custom transport) as that output: one
 *   socket write per batch, the backlog for congestion, end with a grace timeout then destroy; and
 *   its data / drain / error / close as calls, bytes stamped with their arrival time.
 *
 * What a role does with events, errors and limits stays with the role (client/transport.ts,
 * cluster-broker/server/).
 */
import type { Duplex } from 'node:stream';
import { microtask } from '../common/microtask.js';
import type { ProtocolConnection } from './connection.js';

/** Batches below this total size are joined into one Buffer; bigger ones use cork/uncork. */
const CONCAT_LIMIT = 64 * 1024;

/** Where an engine's bytes go. */
export interface EngineOutput {
  /** One batch of frames, in order: written as one socket write. */
  write(chunks: Uint8Array[]): void;
  /** Bytes written and not yet sent (the socket's writableLength). Absent: never congested. */
  backlog?(): number;
  /** No more output: end the transport after what was written. */
  end(): void;
}

/** What the role does when the driver runs. */
export interface DriverHooks {
  /** The engine's deadline passed: tick it at `now` and handle its events. */
  onDeadline(now: number): void;
  /**
   * Before a scheduled batch is taken: handle the engine's pending events (handlers may send).
   * False: nothing is written now: the connection ended, or the role holds its output and
   * schedules a flush itself when the hold ends (the client after a read that filled its buffer).
   */
  beforeFlush?(): boolean;
}

export interface EngineDriverOptions {
  /** The clock the engine was created with (ms). */
  clock: () => number;
  /**
   * When a scheduled batch is written: 'microtask' (everything the caller's synchronous code
   * produced), 'drained' (once the microtask queue is empty: also what the promise chains that
   * code started produced, e.g. a `for await` loop settling every delivery one socket chunk
   * brought) or 'turn' (setImmediate: also what promises resolved in this I/O phase produced).
   */
  batch: 'microtask' | 'drained' | 'turn';
}

type DrivenEngine = Pick<ProtocolConnection, 'takeOutput' | 'nextDeadline' | 'state'>;

export class EngineDriver {
  private flushScheduled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly clock: () => number;
  private readonly batch: EngineDriverOptions['batch'];
  // bound once: scheduling a flush or a deadline allocates nothing
  private readonly runScheduled = (): void => {
    this.flushScheduled = false;
    if (this.hooks.beforeFlush && !this.hooks.beforeFlush()) return;
    this.flush();
  };
  /**
   * A tick queued from a microtask runs once the microtask queue is drained (Node runs the
   * next-tick queue again after each drain), so the batch waits for every continuation queued
   * meanwhile, however many hops they take.
   */
  private readonly afterDrain = (): void => {
    process.nextTick(this.runScheduled);
  };
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    if (this.stopped) return;
    this.hooks.onDeadline(this.clock());
    if (!this.stopped) this.scheduleFlush();
  };

  constructor(
    private readonly engine: DrivenEngine,
    private readonly output: EngineOutput,
    private readonly hooks: DriverHooks,
    options: EngineDriverOptions,
  ) {
    this.clock = options.clock;
    this.batch = options.batch;
  }

  /** Something may have produced output: write it at the end of the batch. */
  scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    if (this.batch === 'turn') setImmediate(this.runScheduled);
    else microtask(this.batch === 'drained' ? this.afterDrain : this.runScheduled);
  }

  /** Write the engine's output now; end the output once the engine closed, else follow its deadline. */
  flush(): void {
    const out = this.engine.takeOutput();
    if (out.length > 0) this.output.write(out);
    if (this.engine.state === 'closed') {
      this.stop();
      this.output.end();
      return;
    }
    this.armTimer();
  }

  /** The connection is gone: no more deadlines. Output still flushed is written while the output takes it. */
  stop(): void {
    this.stopped = true;
    this.clearTimer();
  }

  private armTimer(): void {
    if (this.stopped) return;
    const at = this.engine.nextDeadline();
    if (at === undefined) {
      this.clearTimer();
      return;
    }
    if (this.timer !== undefined && this.timerAt <= at) return;
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(this.onTimer, Math.max(1, Math.ceil(at - this.clock())));
    this.timer.unref?.();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }
}

/** A connected stream's events, as the role handles them. */
export interface SocketEvents {
  /**
   * Bytes arrived, at `now` (the port's clock). `more`: the read filled its buffer, so the next
   * read most likely follows in the same turn (a port that cannot tell passes false).
   */
  data(chunk: Uint8Array, now: number, more: boolean): void;
  /** The backlog drained (resume what paused on congestion). */
  drain?(): void;
  /** The stream failed; 'close' follows. */
  error(err: Error): void;
  /** The stream is gone. */
  close(): void;
}

export interface SocketPortOptions {
  clock: () => number;
  /** After end(), how long the peer has to close before the stream is destroyed. */
  endGraceMs: number;
}

export class SocketPort implements EngineOutput {
  private endTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly endGraceMs: number;

  constructor(
    readonly socket: Duplex,
    options: SocketPortOptions,
    events: SocketEvents,
  ) {
    this.endGraceMs = options.endGraceMs;
    // a TCP socket (node:net): no Nagle delay; other streams have no such knob. Duck-typed so this
    // file imports no Node module (the barrel feeds the browser build too)
    (socket as Partial<{ setNoDelay(on: boolean): unknown }>).setNoDelay?.(true);
    const clock = options.clock;
    // `filled` comes from the client's slab reads (client/slab-reads.ts); a plain stream has none
    socket.on('data', (chunk: Uint8Array, filled?: boolean) => events.data(chunk, clock(), filled === true));
    if (events.drain) socket.on('drain', events.drain);
    socket.on('error', (err: Error) => events.error(err));
    socket.on('close', () => {
      if (this.endTimer !== undefined) clearTimeout(this.endTimer);
      events.close();
    });
  }

  get destroyed(): boolean {
    return this.socket.destroyed;
  }

  /** One write for the batch: a single Buffer when small, else cork + writes + uncork (one writev). */
  write(chunks: Uint8Array[]): void {
    const socket = this.socket;
    if (socket.destroyed) return;
    if (chunks.length === 1) {
      socket.write(chunks[0]!);
      return;
    }
    let total = 0;
    for (const c of chunks) total += c.length;
    if (total <= CONCAT_LIMIT) {
      socket.write(Buffer.concat(chunks, total));
      return;
    }
    socket.cork();
    for (const c of chunks) socket.write(c);
    socket.uncork();
  }

  backlog(): number {
    return this.socket.writableLength;
  }

  /** End after what was written; destroy if the peer has not closed within the grace. */
  end(): void {
    if (this.socket.destroyed || this.endTimer !== undefined) return;
    this.socket.end();
    this.endTimer = setTimeout(() => this.socket.destroy(), this.endGraceMs);
    this.endTimer.unref?.();
  }

  /** Drop the stream at once. */
  destroy(): void {
    this.socket.destroy();
  }
}
