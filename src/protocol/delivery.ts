/**
 * Deliveries as the engine's user sees them. Outgoing ones carry the write status the client's
 * failover journal needs (was any byte of it handed to the output?); incoming ones carry the
 * reassembled message bytes and the settlement methods.
 */
import type { AmqpErrorBody, DeliveryState, Fields } from './codec-port.js';
import type { ReceiverLink } from './receiver.js';
import type { SenderLink } from './sender.js';

/**
 * queued: nothing written yet (safe to re-send elsewhere: the peer never saw it);
 * partial: some frames of a multi-frame message written;
 * sent: every frame written, not settled locally;
 * settled: settled locally (remoteState tells the outcome, if any);
 * aborted: abandoned (aborted on the wire if it was partial, dropped if queued).
 */
export type OutgoingStatus = 'queued' | 'partial' | 'sent' | 'settled' | 'aborted';

export class OutgoingDelivery {
  /** Session delivery-id, assigned when the first frame is written (-1 before). */
  id = -1;
  status: OutgoingStatus = 'queued';
  /** True once any frame of this delivery was handed to the output. */
  written = false;
  remoteSettled = false;
  remoteState: DeliveryState | undefined = undefined;
  /** Our settlement state (set when settled locally, with the state we sent, if any). */
  localState: DeliveryState | undefined = undefined;
  /** Bytes of the payload already written. */
  offset = 0;
  /** @internal abort() was called while partially written; the aborting frame is pending. */
  abortRequested = false;
  /** Opaque slot for the engine's user (e.g. the client's pending-send record). */
  context: unknown = undefined;
  /** The state its first transfer frame carries (a transactional send's transactional-state). */
  state: DeliveryState | undefined = undefined;

  constructor(
    readonly link: SenderLink,
    readonly tag: Uint8Array,
    /** The encoded message; released (emptied) once fully written. */
    public payload: Uint8Array,
    /** True when sent pre-settled (the peer settles nothing, no outcome comes back). */
    readonly presettled: boolean,
    readonly messageFormat: number,
  ) {}

  get settled(): boolean {
    return this.status === 'settled' || this.status === 'aborted';
  }

  /** Settle locally (optionally with a state); sends a disposition unless nothing was written. */
  settle(state?: DeliveryState): void {
    this.link.settleDelivery(this, state);
  }

  /** Abort: a queued delivery is dropped, a partially written one is aborted on the wire. */
  abort(): void {
    this.link.abortDelivery(this);
  }
}

export class IncomingDelivery {
  /** Set when we settled locally. */
  settled = false;
  localState: DeliveryState | undefined = undefined;
  remoteState: DeliveryState | undefined;
  context: unknown = undefined;

  constructor(
    readonly link: ReceiverLink,
    readonly id: number,
    readonly tag: Uint8Array,
    /** The complete message bytes (owned by the delivery: not a view into a reusable buffer). */
    readonly payload: Uint8Array,
    readonly messageFormat: number,
    /** The sender settled it already (pre-settled transfer or a later disposition). */
    public remoteSettled: boolean,
    /** true = rcv-settle-mode second: our outcome is sent unsettled, we settle once the sender does. */
    readonly settleSecond: boolean,
    remoteState?: DeliveryState,
  ) {
    this.remoteState = remoteState;
  }

  /**
   * Send `state`. `settled` defaults to true in rcv-settle-mode first, false in second (where
   * the engine settles on its own once the sender settles).
   */
  disposition(state: DeliveryState | undefined, settled?: boolean): void {
    this.link.dispose(this, state, settled ?? !this.settleSecond);
  }
  accept(): void {
    this.disposition(ACCEPTED);
  }
  release(): void {
    this.disposition(RELEASED);
  }
  reject(error?: AmqpErrorBody): void {
    this.disposition(error ? { type: 'rejected', error } : REJECTED);
  }
  modify(opts: { deliveryFailed?: boolean; undeliverableHere?: boolean; messageAnnotations?: Fields }): void {
    this.disposition({ type: 'modified', ...opts });
  }
}

/** Shared immutable outcomes (also lets the disposition batcher compare by identity cheaply). */
export const ACCEPTED: DeliveryState = Object.freeze({ type: 'accepted' }) as DeliveryState;
export const RELEASED: DeliveryState = Object.freeze({ type: 'released' }) as DeliveryState;
export const REJECTED: DeliveryState = Object.freeze({ type: 'rejected' }) as DeliveryState;

/** An outcome ends the delivery's life (received is not one; transactional-state carries one). */
export function isTerminal(state: DeliveryState | undefined): boolean {
  if (!state) return false;
  return (
    state.type === 'accepted' ||
    state.type === 'rejected' ||
    state.type === 'released' ||
    state.type === 'modified'
  );
}
