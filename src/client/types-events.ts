/**
 * Public types of events: the typed event maps of a Connection and of its links, and the
 * failover event. Re-exported by types.ts.
 */
import type { MessageId } from '../codec/public.js';

/** Reported by the `failover` event once the connection works again on another (or the same) member. */
export interface FailoverEvent {
  /** URL of the member that was lost (absent if none was connected). */
  from?: string;
  /** URL of the member now in use. */
  to: string;
  /**
   * Why the previous connection ended: `'unresponsive'` when the member stopped answering while
   * it owed answers (docs/failover.md#unresponsive), else the error's message.
   */
  reason?: string;
  /** From losing the connection to having re-attached and re-sent, ms. */
  durationMs: number;
  /** Deliveries re-sent (queued and in doubt, docs/delivery-contract.md#in-doubt-resend). */
  resent: number;
  /** Links re-attached. */
  reattached: number;
}

/** The events of a {@link Connection}: `conn.on(name, listener)` is type-checked against this map. */
export interface ConnectionEvents {
  /** A physical connection is open (the first one, and each one after a failover). */
  connected: [
    info: {
      /** The member's URL. */
      url: string;
      /** Our container-id. */
      containerId: string;
      /** The broker's container-id. */
      remoteContainerId: string;
    },
  ];
  /** A physical connection was lost; failover follows unless reconnect is off. */
  disconnected: [
    info: {
      /** The member's URL. */
      url: string;
      /** Why it was lost. */
      error?: Error;
    },
  ];
  /** A reconnect attempt is about to be made. */
  reconnecting: [
    info: {
      /** Attempt number in this outage, from 1. */
      attempt: number;
      /** Backoff before this attempt, ms. */
      delayMs: number;
      /** The member about to be tried. */
      url: string;
      /** Why the previous attempt failed, if one did (also published during connect()). */
      error?: Error;
    },
  ];
  /** Failover completed: links re-attached, unsettled sends re-sent. */
  failover: [info: FailoverEvent];
  /** The member list changed (docs/failover.md#membership). */
  membership: [
    info: {
      /** Every member's URL now. */
      members: string[];
      /** URLs that joined. */
      added: string[];
      /** URLs that left. */
      removed: string[];
    },
  ];
  /** A written send lost its connection before its outcome arrived; it will be re-sent. */
  inDoubt: [
    info: {
      /** The send's message-id. */
      messageId: MessageId;
      /** The sender's address. */
      address: string;
    },
  ];
  /** Failover gave up (or is off); emitted only when someone listens, before `closed`. */
  error: [error: Error];
  /** The connection is closed for good (by `close()` or after reconnection gave up). */
  closed: [
    info: {
      /** Why, if it was not closed by the application. */
      error?: Error;
    },
  ];
}

/** The events of a {@link Sender} or {@link Receiver}. */
export interface LinkEvents {
  /** (Re-)attached: after openSender/openReceiver and after every failover. */
  attached: [];
  /** The link is gone for now (connection lost: it re-attaches) or for good (`closed`). */
  detached: [
    info: {
      /** Why it detached. */
      error?: Error;
      /** True if the link is closed for good. */
      closed: boolean;
    },
  ];
  /** An error on the link that no call awaits. */
  error: [error: Error];
}
