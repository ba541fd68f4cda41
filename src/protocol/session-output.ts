/**
 * A session's writing side (session.ts): what its links call per delivery (transfer window,
 * delivery ids, the unsettled windows, queued dispositions and flows), the frames it writes
 * (attach, detach, transfer, end) and the flush of its batched dispositions and flows. Split
 * from the fields (session-fields.ts) and the frame handlers (session-input.ts).
 */
import type { AmqpErrorBody, Attach, DeliveryState, Detach, Flow, Transfer } from './codec-port.js';
import type { IncomingDelivery, OutgoingDelivery } from './delivery.js';
import type { Link } from './link.js';
import type { SenderLink } from './sender.js';
import type { Session } from './session.js';
import { SessionFields } from './session-fields.js';

/** Bytes a transfer frame needs besides its payload (frame header + worst-case performative). */
const TRANSFER_OVERHEAD = 128;

export abstract class SessionOutput extends SessionFields {
  /** End the session (optionally with an error). */
  end(error?: AmqpErrorBody): void {
    if (this.state !== 'mapped' && this.state !== 'begin-sent') return;
    this.flush();
    if (error) this.error = error;
    this.state = 'end-sent';
    this.conn.writeFrame(this.channel, { type: 'end', body: error ? { error } : {} });
  }

  // ---- used by links ----

  /** @internal */
  canTransfer(): boolean {
    return this.state === 'mapped' && this.remoteIncomingWindow > 0 && this.conn.canTransfer;
  }
  /** @internal */
  blockOnWindow(link: SenderLink): void {
    if (!this.blocked.includes(link)) this.blocked.push(link);
  }
  /** @internal */
  maxTransferPayload(): number {
    return this.conn.outgoingMaxFrameSize - TRANSFER_OVERHEAD;
  }
  /** @internal */
  allocDeliveryId(): number {
    const id = this.nextDeliveryId;
    this.nextDeliveryId = (id + 1) >>> 0;
    return id;
  }
  /** @internal */
  trackOutgoing(d: OutgoingDelivery): void {
    this.outgoing.add(d);
  }
  /** @internal */
  untrackOutgoing(d: OutgoingDelivery): void {
    if (d.id >= 0) this.outgoing.delete(d);
  }
  /** @internal */
  trackIncoming(d: IncomingDelivery): void {
    this.incoming.add(d);
  }
  /** @internal */
  untrackIncoming(d: IncomingDelivery): void {
    this.incoming.delete(d);
  }
  /** @internal */
  queueDisposition(
    this: Session,
    role: boolean,
    id: number,
    state: DeliveryState | undefined,
    settled: boolean,
  ): void {
    this.dispositions.add(role, id, state, settled);
    this.conn.markDirty(this);
  }
  /** @internal */
  markFlow(this: Session, link: Link): void {
    this.flowLinks.add(link);
    this.conn.markDirty(this);
  }
  /** Nothing may follow our End on this channel. */
  private get writable(): boolean {
    return this.state === 'mapped' || this.state === 'begin-sent';
  }

  /** @internal */
  writeAttach(a: Attach): void {
    if (!this.writable) return;
    this.conn.writeFrame(this.channel, { type: 'attach', body: a });
  }
  /** @internal */
  writeDetach(link: Link, closed: boolean, error?: AmqpErrorBody): void {
    if (!this.writable) return;
    this.flush();
    const d: Detach = { handle: link.handle };
    if (closed) d.closed = true;
    if (error) d.error = error;
    this.conn.writeFrame(this.channel, { type: 'detach', body: d });
  }
  /** @internal */
  writeTransfer(t: Transfer, payload: Uint8Array): void {
    if (this.state !== 'mapped') return;
    this.nextOutgoingId = (this.nextOutgoingId + 1) >>> 0;
    this.remoteIncomingWindow--;
    this.conn.writeFrame(this.channel, { type: 'transfer', body: t }, payload);
  }

  /** @internal the first (or only) transfer of a delivery without a delivery state (connection-output.ts writeDeliveryStart). */
  writeDeliveryStart(handle: number, d: OutgoingDelivery, more: boolean, payload: Uint8Array): void {
    if (this.state !== 'mapped') return;
    this.nextOutgoingId = (this.nextOutgoingId + 1) >>> 0;
    this.remoteIncomingWindow--;
    this.conn.writeDeliveryStart(this.channel, handle, d, more, payload);
  }

  /** @internal write pending dispositions and flows. */
  flush(): void {
    this.dirty = false;
    if (this.state !== 'mapped') {
      if (this.state !== 'begin-sent') {
        this.dispositions.take(); // the session is gone: nobody to tell
        this.flowLinks.clear();
      }
      return;
    }
    if (this.dispositions.size > 0) {
      for (const body of this.dispositions.take()) {
        this.conn.writeFrame(this.channel, { type: 'disposition', body });
      }
    }
    if (this.flowLinks.size > 0) {
      const links = [...this.flowLinks];
      this.flowLinks.clear();
      for (const link of links) {
        if (link.state !== 'attached') continue;
        const f = this.sessionFlow();
        // a link with nothing to tell yet (a drain still held) marks itself again when it has
        if (link.fillFlow(f)) this.writeFlow(f);
      }
    }
    if (this.windowDirty || this.echoRequested) {
      const flow = this.sessionFlow();
      if (this.echoRequested) {
        flow.echo = true;
        this.echoPending = true;
      }
      this.echoRequested = false;
      this.writeFlow(flow);
    }
  }

  /** The session part of a flow we send: our window opened to its maximum again. */
  private sessionFlow(): Flow {
    return {
      nextIncomingId: this.nextIncomingId,
      incomingWindow: this.maxIncomingWindow,
      nextOutgoingId: this.nextOutgoingId,
      outgoingWindow: this.local.outgoingWindow,
    };
  }

  /** Every flow carries the session's window: once one is written, the peer knows it is open again. */
  private writeFlow(f: Flow): void {
    this.incomingWindow = f.incomingWindow;
    this.windowDirty = false;
    this.conn.writeFrame(this.channel, { type: 'flow', body: f });
  }
}
