/**
 * The protocol connection's reading side (connection.ts): frames from the reader dispatched to the
 * handshake, to the connection's own performatives (Open, Close) or to their session; decode
 * errors and violations end the connection. Split from writing (connection-output.ts) and the
 * driving API (connection.ts), which answers Begin and closes.
 */
import {
  type AmqpErrorBody,
  type Begin,
  encodeProtocolHeader,
  type Frame,
  MIN_MAX_FRAME_SIZE,
  type Open,
  type Performative,
} from './codec-port.js';
import { Condition } from './conditions.js';
import { ConnectionOutput } from './connection-output.js';
import type { HeaderFrame } from './handshake.js';

const UINT_MAX = 0xffffffff;

export abstract class ConnectionInput extends ConnectionOutput {
  /** @internal close the connection on a connection-scope violation. */
  fail(condition: string, description: string): void {
    this.reportError('connection', condition, description);
    this.close({ condition, description });
  }

  protected process(): void {
    while (this.phase !== 'done' && this.phase !== 'auth-pending') {
      let f: Frame | HeaderFrame | undefined;
      try {
        f = this.reader.next() as Frame | HeaderFrame | undefined;
      } catch (e) {
        this.onDecodeError(e);
        return;
      }
      if (f === undefined) return;
      switch (f.kind) {
        case 'protocol-header':
          this.handshake.onHeader(f);
          break;
        case 'sasl':
          this.handshake.onSasl(f.performative);
          break;
        case 'amqp':
          this.traceFrame?.('in', f.channel, f.performative, f.payload?.length ?? 0);
          this.onAmqp(f.channel, f.performative, f.payload);
          break;
        case 'heartbeat':
          this.traceFrame?.('in', 0, undefined, 0);
          if (this.phase !== 'amqp')
            this.terminate(Condition.framingError, 'empty frame outside the AMQP layer');
          break;
      }
    }
  }

  private onDecodeError(e: unknown): void {
    const err = e as { condition?: unknown; description?: unknown; message?: unknown };
    const condition = typeof err.condition === 'string' ? err.condition : Condition.decodeError;
    const description =
      typeof err.description === 'string' ? err.description : String(err.message ?? 'undecodable input');
    this.reportError('connection', condition, description);
    // a server answers a header it cannot parse with the one it supports
    if (this.role === 'server' && this.handshake.firstHeader) {
      this.out.push(encodeProtocolHeader(this.opts.allowNoSasl === false ? 3 : 0));
    }
    this.close({ condition, description });
    // the byte stream is no longer parseable: do not wait for the peer's Close
    this.finish(false);
  }

  /** Stop without a Close frame (before the AMQP layer, or when the stream is unusable). */
  protected terminate(condition: string, description: string): void {
    const error = { condition, description };
    this.error = error;
    this.reportError('connection', condition, description);
    this.finish(false);
  }

  protected finish(byPeer: boolean): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.phase = 'done';
    for (const s of this.sessions) s?.onConnectionGone();
    this.emit({ type: 'closed', error: this.error, byPeer });
  }

  private onAmqp(channel: number, p: Performative, payload: Uint8Array | undefined): void {
    if (this.phase !== 'amqp') {
      this.terminate(Condition.framingError, `unexpected AMQP frame ${p.type}`);
      return;
    }
    if (this.state === 'close-sent') {
      if (p.type === 'close') this.onClose(p.body.error);
      return;
    }
    if (!this.remoteOpen) {
      if (p.type !== 'open') {
        this.fail(Condition.illegalState, `${p.type} before open`);
        return;
      }
      this.onOpen(p.body);
      return;
    }
    switch (p.type) {
      case 'begin':
        this.onBegin(channel, p.body);
        return;
      case 'close':
        this.onClose(p.body.error);
        return;
      case 'open':
        this.fail(Condition.illegalState, 'second open');
        return;
      default: {
        const s = this.remoteSessions.get(channel);
        if (!s) {
          this.fail(Condition.illegalState, `${p.type} on channel ${channel} with no session`);
          return;
        }
        s.onFrame(p, payload);
      }
    }
  }

  private onOpen(o: Open): void {
    this.remoteOpen = o;
    const remoteMax = o.maxFrameSize ?? UINT_MAX;
    if (remoteMax < MIN_MAX_FRAME_SIZE) {
      this.fail(Condition.invalidField, `peer max-frame-size ${remoteMax} below ${MIN_MAX_FRAME_SIZE}`);
      return;
    }
    this.outgoingMaxFrameSize = Math.min(remoteMax, this.localOpen.maxFrameSize!);
    this.remoteChannelMax = o.channelMax ?? 65535;
    // a peer asking for heartbeats more often than every 100 ms gets them every 100 ms
    this.remoteIdle = o.idleTimeOut ? Math.max(o.idleTimeOut, 200) : 0;
    if (!this.openSent) this.sendOpen();
    this.state = 'open';
    this.emit({ type: 'remote-open', open: o });
    // links attached before the peer's Open may hold queued deliveries
    for (const s of this.sessions) {
      if (!s) continue;
      for (const l of s.activeLinks()) if (l.isSender) (l as unknown as { pump(): void }).pump();
    }
  }

  private onClose(error: AmqpErrorBody | undefined): void {
    const byPeer = this.state !== 'close-sent';
    if (byPeer) {
      if (error) this.error = error;
      this.emit({ type: 'remote-close', error });
      this.writeFrame(0, { type: 'close', body: {} });
    }
    this.finish(byPeer);
  }

  abstract close(error?: AmqpErrorBody): void;
  protected abstract onBegin(channel: number, b: Begin): void;
}
