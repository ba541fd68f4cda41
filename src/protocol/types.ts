/**
 * Public types of the sans-I/O engine: options for both roles and the events it produces.
 */
import type { Logger } from '../common/logger.js';
import type { AmqpErrorBody, Attach, Begin, Fields, Open } from './codec-port.js';
import type { IncomingDelivery, OutgoingDelivery } from './delivery.js';
import type { Link } from './link.js';
import type { ReceiverLink } from './receiver.js';
import type { SenderLink } from './sender.js';
import type { Session } from './session.js';

export type Role = 'client' | 'server';

/** The engine's optional logger (the common {@link Logger}). Silent when absent. */
export type ProtocolLogger = Logger;

/** What a SASL client offers. */
export type SaslClientOptions =
  | { mechanism: 'ANONYMOUS'; trace?: string }
  | { mechanism: 'PLAIN'; username: string; password: string; authzid?: string };

/** The identity a SASL client presented, as the server's authenticator sees it. */
export interface SaslIdentity {
  username?: string;
  password?: string;
  authzid?: string;
  /** ANONYMOUS trace string, if any. */
  trace?: string;
}

/** Server side: decides whether a SASL identity is admitted. May be async. */
export type SaslAuthenticator = (mechanism: string, identity: SaslIdentity) => boolean | Promise<boolean>;

export interface SaslServerOptions {
  /** Mechanisms offered, in order of preference. Default: ['PLAIN', 'ANONYMOUS']. */
  mechanisms?: string[];
  /** Default: admits ANONYMOUS, refuses anything else. */
  authenticate?: SaslAuthenticator;
}

/** Our Open frame, minus what the engine fills in itself. */
export interface LocalOpenOptions {
  containerId: string;
  hostname?: string;
  /** Largest frame we accept; declared in Open. Default 1 MiB. */
  maxFrameSize?: number;
  /** Highest channel number we accept; declared in Open. Default 255. */
  channelMax?: number;
  /** Our idle timeout in ms (declared in Open). 0/absent: none. */
  idleTimeOut?: number;
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
  properties?: Fields;
}

export interface EngineOptions {
  role: Role;
  open: LocalOpenOptions;
  /**
   * client: the SASL mechanism to use, or absent for a bare AMQP header (no SASL layer).
   * server: SASL settings; absent means SASL is offered with ANONYMOUS only.
   */
  sasl?: SaslClientOptions | SaslServerOptions;
  /** server: accept a client that skips SASL and sends the AMQP header directly. Default true. */
  allowNoSasl?: boolean;
  /** Default session incoming window in transfer frames. Default 2048. */
  incomingWindow?: number;
  /** Largest message reassembled on receive when a link declares no max-message-size. Default 64 MiB. */
  maxMessageSize?: number;
  /** Time (ms) at construction; later times come through tick()/receive(). Default 0. */
  now?: number;
  logger?: ProtocolLogger;
  /**
   * Called when the engine produced output or events outside receive()/tick()/API calls
   * (only after an async SASL authenticator resolves), so the adapter drains them.
   */
  onAsyncWork?: () => void;
}

export interface BeginOptions {
  incomingWindow?: number;
  outgoingWindow?: number;
  handleMax?: number;
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
  properties?: Fields;
}

/** Connection state as seen from outside. */
export type ConnectionState =
  | 'start' // nothing exchanged yet
  | 'sasl' // SASL layer in progress
  | 'opening' // AMQP header exchanged or in flight, Open pending
  | 'open' // both Opens exchanged
  | 'close-sent' // we sent Close, awaiting the peer's
  | 'closed'; // done: flush output, then end the socket

export type EngineEvent =
  /** SASL finished (client: the server's outcome; server: our decision). code 0 = ok. */
  | { type: 'sasl-outcome'; ok: boolean; code: number; mechanism?: string; identity?: SaslIdentity }
  /** The peer's Open arrived (server role: our Open was sent in answer). */
  | { type: 'remote-open'; open: Open }
  /** The peer sent Close (we answered with Close unless we had already sent one). */
  | { type: 'remote-close'; error?: AmqpErrorBody }
  /** The engine detected a protocol violation and sent close/end/detach with this error. */
  | {
      type: 'protocol-error';
      scope: 'connection' | 'session' | 'link';
      error: AmqpErrorBody;
      session?: Session;
      link?: Link;
    }
  /** Terminal: no more input is processed. `error` is the cause, ours or the peer's. */
  | { type: 'closed'; error?: AmqpErrorBody; byPeer: boolean }
  /** The peer's Begin: the answer to ours, or a peer-initiated session (already answered). */
  | { type: 'session-begin'; session: Session; begin: Begin }
  /** The peer's End arrived (we answered it if needed); or we ended the session on an error. */
  | { type: 'session-end'; session: Session; error?: AmqpErrorBody; byPeer: boolean }
  /** Peer-initiated attach: answer with link.accept(...) or link.refuse(error). */
  | { type: 'attach-request'; link: Link; attach: Attach }
  /** The peer's Attach answering ours. A refusal shows as null source/target, then link-detached. */
  | { type: 'link-attached'; link: Link; attach: Attach }
  /** The peer detached the link (we answered), or we detached it on an error. */
  | { type: 'link-detached'; link: Link; error?: AmqpErrorBody; closed: boolean; byPeer: boolean }
  /** Sender: the peer's flow changed our credit or asked to drain. */
  | { type: 'link-credit'; link: SenderLink; drain: boolean }
  /** Receiver: the sender's flow arrived (e.g. drain completed: link.credit is 0). */
  | { type: 'link-flow'; link: ReceiverLink; drained: boolean }
  /** Receiver: a complete message arrived. */
  | { type: 'message'; link: ReceiverLink; delivery: IncomingDelivery }
  /** Receiver: the sender aborted a multi-frame delivery (no message is produced). */
  | { type: 'delivery-aborted'; link: ReceiverLink; deliveryTag?: Uint8Array }
  /** The peer changed a delivery's state and/or settled it. */
  | { type: 'delivery-update'; delivery: OutgoingDelivery | IncomingDelivery };
