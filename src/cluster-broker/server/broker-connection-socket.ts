/**
 * BrokerConnection's socket-facing side (broker-connection.ts): what the socket's owner calls
 * (bytes in, timers, drained output, monitoring info), the connection's own deadlines (handshake,
 * slow partial frames, the wait for the peer's Close) and the backpressure link handlers see.
 */
import { BrokerConnectionTeardown } from './broker-connection-teardown.js';

/** How long we wait for the peer's Close after sending ours. */
const CLOSE_WAIT_MS = 2000;
/** Output backlog above which consumers pause (resumed by writable()). */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/** One connection as the monitoring endpoints show it (`GET /api/connections`). */
export interface ConnectionInfo {
  /** The peer's address, `host:port`. */
  remote: string;
  /** From its Open ('' until then). */
  containerId: string;
  /** The SASL PLAIN user; null for ANONYMOUS or no SASL. */
  user: string | null;
  /** Sessions open on the connection. */
  sessions: number;
  /** Links attached across its sessions. */
  links: number;
  /** When the socket was accepted (ISO 8601). */
  openedAt: string;
}

export abstract class BrokerConnectionSocket extends BrokerConnectionTeardown {
  get closed(): boolean {
    return this.ended;
  }

  info(): ConnectionInfo {
    let links = 0;
    const sessions = this.engine.activeSessions();
    for (const s of sessions) links += s.activeLinks().length;
    return {
      remote: this.remote,
      containerId: this.containerId,
      user: this.user ?? null,
      sessions: sessions.length,
      links,
      openedAt: new Date(this.startedAt).toISOString(),
    };
  }

  /** Bytes from the socket. */
  receive(chunk: Uint8Array, now: number): void {
    if (this.ended) return;
    try {
      this.engine.receive(chunk, now);
      this.trackPartial(now);
      this.process();
    } catch (err) {
      // never let one connection's input take the process down
      this.internalError(err);
    }
  }

  /** Timers: heartbeats, idle timeout, handshake deadline, slow partial frames. */
  tick(now: number): void {
    if (this.ended) return;
    try {
      this.tickUnguarded(now);
    } catch (err) {
      this.internalError(err);
    }
  }

  private tickUnguarded(now: number): void {
    const o = this.ctx.opts;
    const state = this.engine.state;
    if (state !== 'open' && state !== 'close-sent' && now - this.startedAt > o.handshakeTimeoutMs) {
      this.abort({
        condition: 'amqp:resource-limit-exceeded',
        description: `no Open within ${o.handshakeTimeoutMs} ms`,
      });
      return;
    }
    if (this.partialSince !== undefined && o.idleTimeoutMs > 0 && now - this.partialSince > o.idleTimeoutMs) {
      this.abort({
        condition: 'amqp:resource-limit-exceeded',
        description: `incomplete frame for more than ${o.idleTimeoutMs} ms`,
      });
      return;
    }
    if (state === 'close-sent') {
      if (this.closeSentAt === undefined) this.closeSentAt = now;
      else if (now - this.closeSentAt > CLOSE_WAIT_MS) {
        this.flush();
        this.finish();
        return;
      }
    }
    this.engine.tick(now);
    this.process();
  }

  private trackPartial(now: number): void {
    // The engine does not expose its reader; reading its buffered count is the only way to bound
    // a peer that dribbles a frame byte by byte (each byte resets the idle timer).
    const reader = (this.engine as unknown as { reader?: { buffered?: number } }).reader;
    const buffered = reader?.buffered ?? 0;
    if (buffered === 0) this.partialSince = undefined;
    else if (this.partialSince === undefined) this.partialSince = now;
  }

  /** The socket drained its output: resume consumers that paused on congestion. */
  writable(): void {
    if (this.writableWaiters.length === 0 || this.congested) return;
    const w = this.writableWaiters;
    this.writableWaiters = [];
    for (const f of w) f();
  }

  // ---- LinkHost ----

  get congested(): boolean {
    return (this.io.backlog?.() ?? 0) > HIGH_WATER_BYTES;
  }

  whenWritable(resume: () => void): void {
    this.writableWaiters.push(resume);
  }

  scheduleFlush(): void {
    if (!this.ended) this.driver.scheduleFlush();
  }
}
