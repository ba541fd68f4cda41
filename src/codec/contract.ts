/**
 * The codec's contract with the layers above it (protocol/, client/, cluster-broker/).
 *
 * These are the decoded shapes of every AMQP 1.0 composite the engine exchanges. Field names are
 * the spec's field names in camelCase. A field absent on the wire (or null) is `undefined`
 * (the property is simply not present). Defaults from the spec are NOT filled in by the
 * decoder: the engine applies them, because "absent" and "default" differ for some fields
 * (e.g. attach.initialDeliveryCount). Integer fields of type uint/ushort/ubyte are `number`;
 * ulong fields (descriptor-sized, delivery-number etc.) are `number` (they are < 2^53 in practice;
 * the codec throws a decode error for a ulong in these fields that is not a safe integer).
 * Symbols are `string`; multiple-symbol fields are `string[]` (a single symbol on the wire decodes
 * to a one-element array). Binary is `Uint8Array` (a view, not a copy). Fields of type `*`
 * (delivery-state, source/target, error info, properties maps) use the value model in values.ts.
 */
import type { AmqpValue } from './values.js';

/** A fields map (symbol keys) as in open/begin/attach/flow `properties` and error `info`. */
export type Fields = Record<string, AmqpValue>;

export interface AmqpErrorBody {
  condition: string;
  description?: string;
  info?: Fields;
}

export interface Open {
  containerId: string;
  hostname?: string;
  maxFrameSize?: number;
  channelMax?: number;
  idleTimeOut?: number;
  outgoingLocales?: string[];
  incomingLocales?: string[];
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
  properties?: Fields;
}
export interface Begin {
  remoteChannel?: number;
  nextOutgoingId: number;
  incomingWindow: number;
  outgoingWindow: number;
  handleMax?: number;
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
  properties?: Fields;
}

export type TerminusDurability = 0 | 1 | 2;
export interface Source {
  address?: string;
  durable?: number;
  expiryPolicy?: string;
  timeout?: number;
  dynamic?: boolean;
  dynamicNodeProperties?: Fields;
  distributionMode?: string;
  filter?: Fields;
  defaultOutcome?: DeliveryState;
  outcomes?: string[];
  capabilities?: string[];
}
export interface Target {
  address?: string;
  durable?: number;
  expiryPolicy?: string;
  timeout?: number;
  dynamic?: boolean;
  dynamicNodeProperties?: Fields;
  capabilities?: string[];
}
/** Transaction coordinator target (part 4). */
export interface Coordinator {
  /** marks a coordinator (encoded as descriptor 0x30, not a target); set on decode */
  coordinator?: true;
  capabilities?: string[];
}

/** role: false = sender, true = receiver (as on the wire). */
export interface Attach {
  name: string;
  handle: number;
  role: boolean;
  sndSettleMode?: number; // 0 unsettled, 1 settled, 2 mixed
  rcvSettleMode?: number; // 0 first, 1 second
  source?: Source;
  target?: Target | Coordinator;
  /** keys are delivery tags (binary), values delivery states; kept as the value model's map */
  unsettled?: AmqpValue;
  incompleteUnsettled?: boolean;
  initialDeliveryCount?: number;
  maxMessageSize?: number;
  offeredCapabilities?: string[];
  desiredCapabilities?: string[];
  properties?: Fields;
}
export interface Flow {
  nextIncomingId?: number;
  incomingWindow: number;
  nextOutgoingId: number;
  outgoingWindow: number;
  handle?: number;
  deliveryCount?: number;
  linkCredit?: number;
  available?: number;
  drain?: boolean;
  echo?: boolean;
  properties?: Fields;
}
export interface Transfer {
  handle: number;
  deliveryId?: number;
  deliveryTag?: Uint8Array;
  messageFormat?: number;
  settled?: boolean;
  more?: boolean;
  rcvSettleMode?: number;
  state?: DeliveryState;
  resume?: boolean;
  aborted?: boolean;
  batchable?: boolean;
}
export interface Disposition {
  role: boolean;
  first: number;
  last?: number;
  settled?: boolean;
  state?: DeliveryState;
  batchable?: boolean;
}
export interface Detach {
  handle: number;
  closed?: boolean;
  error?: AmqpErrorBody;
}
export interface End {
  error?: AmqpErrorBody;
}
export interface Close {
  error?: AmqpErrorBody;
}

export type Performative =
  | { type: 'open'; body: Open }
  | { type: 'begin'; body: Begin }
  | { type: 'attach'; body: Attach }
  | { type: 'flow'; body: Flow }
  | { type: 'transfer'; body: Transfer }
  | { type: 'disposition'; body: Disposition }
  | { type: 'detach'; body: Detach }
  | { type: 'end'; body: End }
  | { type: 'close'; body: Close };

export interface SaslMechanisms {
  saslServerMechanisms: string[];
}
export interface SaslInit {
  mechanism: string;
  initialResponse?: Uint8Array;
  hostname?: string;
}
export interface SaslChallenge {
  challenge: Uint8Array;
}
export interface SaslResponse {
  response: Uint8Array;
}
export interface SaslOutcome {
  code: number; // 0 ok, 1 auth, 2 sys, 3 sys-perm, 4 sys-temp
  additionalData?: Uint8Array;
}
export type SaslPerformative =
  | { type: 'sasl-mechanisms'; body: SaslMechanisms }
  | { type: 'sasl-init'; body: SaslInit }
  | { type: 'sasl-challenge'; body: SaslChallenge }
  | { type: 'sasl-response'; body: SaslResponse }
  | { type: 'sasl-outcome'; body: SaslOutcome };

/** Delivery states and outcomes (part 3, 3.4) plus transactional-state (part 4). */
export type DeliveryState =
  | { type: 'received'; sectionNumber: number; sectionOffset: number }
  | { type: 'accepted' }
  | { type: 'rejected'; error?: AmqpErrorBody }
  | { type: 'released' }
  | {
      type: 'modified';
      deliveryFailed?: boolean;
      undeliverableHere?: boolean;
      messageAnnotations?: Fields;
    }
  | { type: 'declared'; txnId: Uint8Array }
  | { type: 'transactional-state'; txnId: Uint8Array; outcome?: DeliveryState };

/**
 * A decoded frame as the incremental FrameReader yields it.
 * - `amqp`: channel plus performative; for transfers `payload` is the bytes after the
 *   performative (a view into the reader's buffer/chunk, valid until the caller releases it;
 *   copy it if it must outlive the next read).
 * - `sasl`: one SASL performative.
 * - `heartbeat`: an empty AMQP frame.
 */
export type Frame =
  | { kind: 'amqp'; channel: number; performative: Performative; payload?: Uint8Array }
  | { kind: 'sasl'; performative: SaslPerformative }
  | { kind: 'heartbeat'; channel: number };

/** Protocol ids from the 8-byte protocol header: 0 AMQP, 2 TLS, 3 SASL. */
export type ProtocolId = 0 | 2 | 3;
