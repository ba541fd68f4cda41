/**
 * The sans-I/O AMQP 1.0 connection engine, for both roles.
 *
 * Drive it with bytes and time; drain bytes and events:
 *   engine.receive(chunk, nowMs)   // bytes from the socket, split anywhere
 *   engine.tick(nowMs)             // heartbeats / idle timeout; call again by engine.nextDeadline()
 *   engine.pollEvents()            // typed events (handle them before takeOutput: handlers may send)
 *   engine.takeOutput()            // Uint8Array[] to write with one writev
 * API calls (begin, attach, send, flow, disposition, close) append output; nothing is written
 * to any socket and no clock is read here.
 */
import { type AmqpErrorBody, type Begin, encodeHeartbeat } from './codec-port.js';
import { Condition } from './conditions.js';
import { ConnectionInput } from './connection-input.js';
import { coalesceSmall } from './output.js';
import { Session } from './session.js';
import type { BeginOptions, EngineEvent } from './types.js';

const NO_OUTPUT: Uint8Array[] = Object.freeze([]) as unknown as Uint8Array[];
const NO_EVENTS: EngineEvent[] = Object.freeze([]) as unknown as EngineEvent[];

export class ProtocolConnection extends ConnectionInput {
  // ---------------------------------------------------------------- driving

  /** Feed bytes from the peer (split anywhere). `now` (ms) updates the clock if given. */
  receive(chunk: Uint8Array, now?: number): void {
    if (now !== undefined) this.now = now;
    if (this.state === 'closed' || chunk.length === 0) return;
    this.lastReceived = this.now;
    this.reader.push(chunk);
    this.process();
  }

  /**
   * The clock (ms) as of the last receive() or tick(): while the events of a read are handled,
   * when its bytes arrived. Reading it costs no clock call (the client's dedup window stamps
   * every delivery with it).
   */
  get clock(): number {
    return this.now;
  }

  /** Advance the clock: sends heartbeats, closes on the peer's silence. */
  tick(now: number): void {
    this.now = now;
    if (this.state !== 'open' && this.state !== 'opening') return;
    if (this.localIdle > 0 && this.openSent && now - this.lastReceived > this.localIdle) {
      const description = `no frame from the peer for ${Math.round(now - this.lastReceived)} ms (idle-time-out ${this.localIdle} ms)`;
      this.reportError('connection', Condition.resourceLimitExceeded, description);
      this.close({ condition: Condition.resourceLimitExceeded, description });
      // the peer is silent: do not wait for its Close
      this.finish(false);
      return;
    }
    if (this.remoteIdle > 0 && now - this.lastSent >= this.remoteIdle / 2) {
      this.traceFrame?.('out', 0, undefined, 0);
      this.out.push(encodeHeartbeat());
      this.lastSent = now;
    }
  }

  /** The time (ms) by which tick() should be called next, or undefined if no timer is needed. */
  nextDeadline(): number | undefined {
    if (this.state !== 'open' && this.state !== 'opening') return undefined;
    let t: number | undefined;
    if (this.localIdle > 0 && this.openSent) t = this.lastReceived + this.localIdle + 1;
    if (this.remoteIdle > 0) {
      const hb = this.lastSent + Math.floor(this.remoteIdle / 2);
      if (t === undefined || hb < t) t = hb;
    }
    return t;
  }

  /**
   * Bytes to write, in order (flushes batched dispositions and flows first). With `coalesce`,
   * runs of small frames are merged into one buffer (fewer writev entries); large payloads are
   * passed through uncopied.
   */
  takeOutput(coalesce = false): Uint8Array[] {
    if (this.dirty.length > 0) this.flushSessions();
    if (this.out.empty) return NO_OUTPUT;
    const out = this.out.take();
    return coalesce && out.length > 1 ? coalesceSmall(out) : out;
  }

  /** Events since the last poll, in order. */
  pollEvents(): EngineEvent[] {
    const ev = this.events;
    if (ev.length === 0) return NO_EVENTS;
    this.events = [];
    return ev;
  }

  /** True when takeOutput() or pollEvents() has something. */
  get hasPending(): boolean {
    return !this.out.empty || this.events.length > 0 || this.dirty.length > 0;
  }

  // ---------------------------------------------------------------- API

  /** Begin a session. Frames may be pipelined before the peer's Open arrives. */
  begin(opts: BeginOptions = {}): Session {
    const early = this.role === 'client' && this.state === 'sasl';
    if (!early && ((this.state !== 'open' && this.state !== 'opening') || !this.openSent)) {
      throw new Error(`begin() in state ${this.state}`);
    }
    const ch = this.unusedChannel();
    if (ch === undefined) throw new Error('no free channel (channel-max reached)');
    const s = new Session(this, ch, opts);
    this.sessions[ch] = s;
    return s;
  }

  /** Close the connection (optionally with an error). Further input is ignored except Close. */
  close(error?: AmqpErrorBody): void {
    if (this.state === 'closed' || this.state === 'close-sent') return;
    if (error) this.error = error;
    // an error before our Open: send Open then Close so the peer learns why (spec 2.4.5)
    if (!this.openSent && this.phase === 'amqp') this.sendOpen();
    if (!this.openSent) {
      // no AMQP layer yet: nothing to send, just stop
      this.finish(false);
      return;
    }
    this.flushSessions();
    this.writeFrame(0, { type: 'close', body: error ? { error } : {} });
    this.state = 'close-sent';
  }

  /**
   * The transport went away (socket closed/errored) without a Close handshake. Emits `closed`
   * with `error` (default amqp:connection:forced); outgoing deliveries keep their status, so a
   * 'sent' and unsettled one is in doubt.
   */
  transportClosed(error?: AmqpErrorBody): void {
    if (this.state === 'closed') return;
    if (!this.error || this.state !== 'close-sent') {
      this.error = error ?? { condition: Condition.connectionForced, description: 'transport closed' };
    }
    this.finish(this.state !== 'close-sent');
  }

  /** Whether the peer has answered a probe of either kind: only then is an unanswered one a sign. */
  get answersProbes(): boolean {
    return this.echoAnswered || this.beginAnswered;
  }

  /** Whether the peer owes us an answer on some session (docs/failover.md#unresponsive). */
  awaitingPeer(): boolean {
    if (this.state !== 'open') return false;
    for (const s of this.sessions) if (s?.awaitingPeer()) return true;
    return false;
  }

  /**
   * Ask the peer for an answer: a session flow with `echo` on the first mapped session (the peer
   * must answer with its flow state). A peer that has not answered an echo yet is also sent a
   * Begin of a session of our own, ended as soon as it is answered: every peer must answer a
   * Begin, and a running broker does so even while its queues elect a leader and answer nothing
   * else (RabbitMQ 3.10 ignores `echo`). `echoOnly`: just the flow (learning whether the peer
   * answers it). False when nothing was asked.
   */
  probe(echoOnly = false): boolean {
    if (this.state !== 'open') return false;
    let asked = false;
    for (const s of this.sessions)
      if (s?.requestEcho()) {
        asked = true;
        break;
      }
    // no mapped session: nothing is owed to us either, so nothing to ask about
    if (!asked || echoOnly || this.echoAnswered) return asked;
    if (this.probeSession !== undefined && this.probeSession.state !== 'ended') return true;
    if (this.unusedChannel() !== undefined) this.probeSession = this.begin();
    return true;
  }

  /** Sessions not yet ended. */
  activeSessions(): Session[] {
    return this.sessions.filter((s): s is Session => s !== undefined);
  }

  get canTransfer(): boolean {
    return this.state === 'open';
  }

  protected onBegin(channel: number, b: Begin): void {
    if (channel > this.localChannelMax) {
      this.fail(
        Condition.framingError,
        `begin on channel ${channel} above channel-max ${this.localChannelMax}`,
      );
      return;
    }
    if (this.remoteSessions.has(channel)) {
      this.fail(Condition.illegalState, `begin on channel ${channel} in use`);
      return;
    }
    let s: Session;
    if (b.remoteChannel !== undefined) {
      const mine = this.sessions[b.remoteChannel];
      if (mine?.state !== 'begin-sent') {
        this.fail(Condition.illegalState, `begin answers channel ${b.remoteChannel}, which began no session`);
        return;
      }
      s = mine;
      s.onRemoteBegin(channel, b);
      if (s === this.probeSession) {
        // the answer is all we wanted: end it (its End answer is not reported either)
        this.beginAnswered = true;
        this.remoteSessions.set(channel, s);
        s.end();
        return;
      }
    } else {
      const ch = this.unusedChannel();
      if (ch === undefined) {
        this.fail(Condition.resourceLimitExceeded, 'no free channel');
        return;
      }
      s = new Session(this, ch, {}, { channel, begin: b });
      this.sessions[ch] = s;
    }
    this.remoteSessions.set(channel, s);
    this.emit({ type: 'session-begin', session: s, begin: b });
  }
}
