/**
 * The protocol connection's writing side (connection.ts): frames into the output (heads encoded
 * straight in, large payloads passed through uncopied, frames held until our Open), events out,
 * the sessions' batched flows and dispositions flushed, channels handed out and freed. Split
 * from the fields (connection-fields.ts) and the reading side (connection-input.ts).
 */
import {
  type AmqpErrorBody,
  type DeliveryStart,
  type EncodedHead,
  encodeAmqpFrame,
  encodeAmqpFrameHead,
  encodeProtocolHeader,
  encodeTransferHead,
  type Performative,
  type Transfer,
} from './codec-port.js';
import { ConnectionFields } from './connection-fields.js';
import type { Link } from './link.js';
import { COPY_LIMIT } from './output.js';
import type { Session } from './session.js';
import type { EngineEvent } from './types.js';

export abstract class ConnectionOutput extends ConnectionFields {
  /** @internal */
  emit(ev: EngineEvent): void {
    this.events.push(ev);
  }

  /** @internal the engine raised an error at some scope: tell the user. */
  reportError(
    scope: 'connection' | 'session' | 'link',
    condition: string,
    description?: string,
    where?: { session?: Session; link?: Link },
  ): void {
    const error: AmqpErrorBody = { condition };
    if (description !== undefined) error.description = description;
    this.opts.logger?.warn?.({ scope, condition, description }, 'amqp protocol error');
    this.emit({ type: 'protocol-error', scope, error, session: where?.session, link: where?.link });
  }

  /** @internal */
  writeFrame(channel: number, p: Performative, payload?: Uint8Array): void {
    if (this.state === 'close-sent' || this.state === 'closed') return;
    this.traceFrame?.('out', channel, p, payload?.length ?? 0);
    const length = payload?.length ?? 0;
    if (!this.openSent && p.type !== 'open') {
      // pipelined before our Open: held apart until it is written (rare, one buffer each)
      this.beforeOpen.push(encodeAmqpFrame(channel, p, payload));
      this.lastSent = this.now;
    } else {
      this.append(encodeAmqpFrameHead(channel, p, length), payload);
    }
  }

  /** A frame's encoded head and its payload into the output. */
  private append(head: EncodedHead, payload: Uint8Array | undefined): void {
    if (payload !== undefined && payload.length >= COPY_LIMIT) {
      // large payloads go out as their own buffer (writev), never copied
      this.out.copy(head);
      this.out.push(payload);
    } else {
      this.out.copy(head, payload);
    }
    this.lastSent = this.now;
  }

  /**
   * @internal The first (or only) transfer of a delivery with no delivery state: its head is
   * written field by field straight into the output (no performative object per delivery); with a
   * frame trace on, or before our Open, through writeFrame like any frame.
   */
  writeDeliveryStart(
    channel: number,
    handle: number,
    d: DeliveryStart,
    more: boolean,
    payload: Uint8Array,
  ): void {
    if (this.traceFrame !== undefined || !this.openSent) {
      const t: Transfer = { handle, deliveryId: d.id, deliveryTag: d.tag, messageFormat: d.messageFormat };
      if (d.presettled) t.settled = true;
      if (more) t.more = true;
      this.writeFrame(channel, { type: 'transfer', body: t }, payload);
      return;
    }
    if (this.state === 'close-sent' || this.state === 'closed') return;
    this.append(encodeTransferHead(channel, handle, d, more, payload.length), payload);
  }

  /** @internal */
  markDirty(s: Session): void {
    if (s.dirty) return;
    s.dirty = true;
    this.dirty.push(s);
  }

  /** @internal */
  freeChannel(s: Session): void {
    if (this.sessions[s.channel] === s) this.sessions[s.channel] = undefined;
    if (s.remoteChannel >= 0 && this.remoteSessions.get(s.remoteChannel) === s) {
      this.remoteSessions.delete(s.remoteChannel);
    }
  }

  protected flushSessions(): void {
    const d = this.dirty;
    this.dirty = [];
    for (const s of d) s.flush();
  }

  protected sendAmqpHeaderAndOpen(): void {
    this.state = 'opening';
    this.out.push(encodeProtocolHeader(0));
    this.sendOpen();
  }

  protected sendOpen(): void {
    this.phase = 'amqp';
    this.writeFrame(0, { type: 'open', body: this.localOpen });
    this.openSent = true;
    // frames the user wrote during SASL (begin, attach, flow) follow our Open
    if (this.beforeOpen.length > 0) {
      for (const b of this.beforeOpen) this.out.push(b);
      this.beforeOpen = [];
    }
    this.reader.setMaxFrameSize(this.localOpen.maxFrameSize!);
  }

  /** The lowest channel no session uses (within both channel-max values), or undefined. */
  protected unusedChannel(): number | undefined {
    const max = Math.min(this.localChannelMax, this.remoteChannelMax);
    for (let c = 0; c <= max; c++) if (this.sessions[c] === undefined) return c;
    return undefined;
  }
}
