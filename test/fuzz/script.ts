/**
 * Valid client-side byte sequences (SASL ANONYMOUS, open, begin, attach both ways, flow,
 * transfer, disposition, detach, end, close), built with our encoders, as the raw material
 * the fuzzers mutate and the healthy peer replays.
 */
import {
  encodeAmqpFrame,
  encodeMessage,
  encodeProtocolHeader,
  encodeSaslFrame,
  type Performative,
} from '../../src/codec/index.js';

export const SASL_HEADER = encodeProtocolHeader(3);
export const AMQP_HEADER = encodeProtocolHeader(0);

export const frame = (channel: number, p: Performative, payload?: Uint8Array): Uint8Array =>
  encodeAmqpFrame(channel, p, payload);

export const open = (containerId = 'fuzz', maxFrameSize?: number): Uint8Array =>
  frame(0, {
    type: 'open',
    body: maxFrameSize === undefined ? { containerId } : { containerId, maxFrameSize },
  });

export const begin = (channel = 0, window = 100): Uint8Array =>
  frame(channel, {
    type: 'begin',
    body: { nextOutgoingId: 0, incomingWindow: window, outgoingWindow: window },
  });

/** Our sender (the broker's publisher link, role false). */
export const attachSender = (channel: number, handle: number, address: string, name = `s${handle}`) =>
  frame(channel, {
    type: 'attach',
    body: { name, handle, role: false, sndSettleMode: 2, target: { address }, initialDeliveryCount: 0 },
  });

/** Our receiver (the broker's consumer link, role true). */
export const attachReceiver = (channel: number, handle: number, address: string, name = `r${handle}`) =>
  frame(channel, {
    type: 'attach',
    body: { name, handle, role: true, rcvSettleMode: 0, source: { address } },
  });

export const flow = (channel: number, handle: number, credit: number, deliveryCount = 0) =>
  frame(channel, {
    type: 'flow',
    body: {
      nextIncomingId: 0,
      incomingWindow: 100,
      nextOutgoingId: 0,
      outgoingWindow: 100,
      handle,
      deliveryCount,
      linkCredit: credit,
    },
  });

export const tag = (n: number): Uint8Array =>
  Uint8Array.of(n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);

export const transfer = (
  channel: number,
  handle: number,
  deliveryId: number,
  payload: Uint8Array,
  more = false,
  settled = false,
) =>
  frame(
    channel,
    { type: 'transfer', body: { handle, deliveryId, deliveryTag: tag(deliveryId), more, settled } },
    payload,
  );

export const accept = (channel: number, first: number, last: number) =>
  frame(channel, {
    type: 'disposition',
    body: { role: true, first, last, settled: true, state: { type: 'accepted' } },
  });

export const detach = (channel: number, handle: number) =>
  frame(channel, { type: 'detach', body: { handle, closed: true } });
export const end = (channel = 0) => frame(channel, { type: 'end', body: {} });
export const close = () => frame(0, { type: 'close', body: {} });

export const saslInit = (): Uint8Array =>
  encodeSaslFrame({
    type: 'sasl-init',
    body: { mechanism: 'ANONYMOUS', initialResponse: new Uint8Array(0) },
  });

export const message = (body: string): Uint8Array => encodeMessage({ messageId: body, body });

/**
 * A whole valid conversation as steps: the caller feeds each step and lets the broker answer
 * before the next (the publisher's credit arrives after its attach is accepted).
 */
export function validSession(queue: string, messages: number): Uint8Array[][] {
  const transfers: Uint8Array[] = [];
  for (let i = 0; i < messages; i++) transfers.push(transfer(0, 0, i, message(`${queue}-${i}`)));
  return [
    [SASL_HEADER, saslInit(), AMQP_HEADER, open(), begin(0)],
    [attachSender(0, 0, queue), attachReceiver(0, 1, queue)],
    [flow(0, 1, messages + 1), ...transfers],
    messages > 0 ? [accept(0, 0, messages - 1)] : [],
    [detach(0, 0), detach(0, 1), end(0), close()],
  ];
}

/** Header + Open + Begin without SASL (the broker admits it when anonymous is on). */
export function openedSession(window = 100): Uint8Array[] {
  return [AMQP_HEADER, open(), begin(0, window)];
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}
