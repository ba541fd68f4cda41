/**
 * The client's `node:diagnostics_channel` contract (docs/observability.md): APMs and
 * instrumentations subscribe to these names instead of patching the library. Publishing costs
 * nothing while nobody subscribes (every publisher checks `hasSubscribers` first).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Message } from '../codec/message.js';
import type { MessageId } from '../codec/message-id.js';
import type { ConnectionEvents, FailoverEvent, Outcome, SendResult, SettleOutcome } from './types.js';

/** The channel names, a public contract: they never change within a major version. */
export const CHANNELS = {
  /** connect() calls (tracing). */
  connect: 'quorate:connect',
  /** send() calls (tracing). */
  send: 'quorate:send',
  /** settlement calls (tracing). */
  settle: 'quorate:settle',
  /** deliveries handed out (plain). */
  receive: 'quorate:receive',
  /** completed failovers (plain). */
  failover: 'quorate:failover',
  /** connection attempts (plain). */
  reconnecting: 'quorate:reconnecting',
  /** member list changes (plain). */
  membership: 'quorate:membership',
} as const;

/** Context of the `quorate:connect` tracing channel (one connect() call). */
export interface ConnectTraceContext {
  /** The configured URLs (passwords removed). */
  urls: string[];
  /** The connection's container-id. */
  containerId: string;
  /** At asyncEnd: the URL connected to. */
  url?: string;
  /** At error: why connect() failed. */
  error?: unknown;
  /** At asyncEnd: the Connection (as tracePromise sets it). */
  result?: unknown;
}

/** Context of the `quorate:send` tracing channel (one send() call). */
export interface SendTraceContext {
  /**
   * The library's own copy of the message, with its messageId set. A `start` subscriber may add
   * entries to `message.applicationProperties` (a fresh object it may change): they are sent.
   */
  message: Message<unknown>;
  /** The sender's target address. */
  address: string;
  /** The message-id it is sent with. */
  messageId: MessageId;
  /** The connection's container-id. */
  containerId: string;
  /** At asyncEnd: the broker's outcome (accepted), also set before `error` for a refusal. */
  outcome?: Outcome;
  /** At asyncEnd: the SendResult. */
  result?: SendResult;
  /** At error: the SendError (its `outcome` says rejected/released/modified, if the broker answered). */
  error?: unknown;
}

/** Context of the `quorate:settle` tracing channel (one accept/reject/release/modify call). */
export interface SettleTraceContext {
  /** The delivery's message. */
  message: Message<unknown>;
  /** The receiver's source address. */
  address: string;
  /** The outcome the application chose. */
  outcome: SettleOutcome;
  /** The connection's container-id. */
  containerId: string;
  /** At error: e.g. 'quorate:in-doubt' when the connection went before the confirmation. */
  error?: unknown;
}

/** Payload of the `quorate:receive` channel: a delivery handed to the application. */
export interface ReceiveMessage {
  /** The message handed out. */
  message: Message<unknown>;
  /** The receiver's source address. */
  address: string;
  /** The connection's container-id. */
  containerId: string;
}

/** The connection a plain-channel message is about. */
export interface ChannelSource {
  /** The connection's container-id. */
  containerId: string;
}
/** Payload of `quorate:failover`: the `failover` event's payload plus the container-id. */
export type FailoverMessage = FailoverEvent & ChannelSource;
/** Payload of `quorate:reconnecting`: the `reconnecting` event's payload plus the container-id. */
export type ReconnectingMessage = ConnectionEvents['reconnecting'][0] & ChannelSource;
/** Payload of `quorate:membership`: the `membership` event's payload plus the container-id. */
export type MembershipMessage = ConnectionEvents['membership'][0] & ChannelSource;

export const connectChannel = diagnosticsChannel.tracingChannel<unknown, ConnectTraceContext>(
  CHANNELS.connect,
);
export const sendChannel = diagnosticsChannel.tracingChannel<unknown, SendTraceContext>(CHANNELS.send);
export const settleChannel = diagnosticsChannel.tracingChannel<unknown, SettleTraceContext>(CHANNELS.settle);
export const receiveChannel = diagnosticsChannel.channel(CHANNELS.receive);
export const failoverChannel = diagnosticsChannel.channel(CHANNELS.failover);
export const reconnectingChannel = diagnosticsChannel.channel(CHANNELS.reconnecting);
export const membershipChannel = diagnosticsChannel.channel(CHANNELS.membership);

/** Publish on a plain channel only when someone listens (building the payload is skipped too). */
export function publish<T>(channel: diagnosticsChannel.Channel, payload: () => T): void {
  if (channel.hasSubscribers) channel.publish(payload());
}
