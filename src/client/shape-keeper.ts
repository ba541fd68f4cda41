/**
 * Keeps the hidden classes of the receive path alive between receivers, holding nothing of them.
 *
 * V8 keeps a hidden class (map) alive only through its live objects (a class's own map for its
 * fields is reached from the constructor by a weak transition), and optimized code that checks
 * or builds an object of that class holds the map weakly: once no Delivery, transfer or message
 * of that shape is alive at a full collection, the maps die and V8 throws away the optimized
 * code of the receive path ("weak objects" in --trace-deopt), compiling it again, off the main
 * thread but on the same CPU, on the next burst. So a receiver's first arrival leaves a twin of
 * itself here (receiver.ts): objects built by the same constructors with the same fields in the
 * same order, so of the same maps, whose references point at nothing (a placeholder), so no
 * connection, receiver or payload is kept (docs/architecture.md#client-receive-jit).
 */
import type { Message } from '../codec/message.js';
import { IncomingDelivery, ReceiverLink, type Session } from '../protocol/index.js';
import type { ReceivedMessage } from './api.js';
import { Delivery, type DeliveryOwner } from './delivery.js';

/** What a twin's references point at instead: an object (as the originals), holding nothing. */
const NOTHING: object = Object.freeze({});

/**
 * A field value of the same V8 representation as `v` (small integer, double, or a reference),
 * holding nothing: numbers, booleans, null and undefined as they are, a string as '', any other
 * reference as NOTHING (a different class in a reference field widens the field's type in place,
 * the map stays).
 */
function hollow(v: unknown): unknown {
  if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean') return v;
  return typeof v === 'string' ? '' : NOTHING;
}

/**
 * The message's keys in its own order, with hollow values: the same map as `m` when `m` too was
 * built from `{}` key by key (a decoded message, a send's copy: copyWith).
 */
export function messageTwin(m: object): Message {
  const twin: Record<string, unknown> = {};
  for (const key of Object.keys(m)) twin[key] = hollow((m as Record<string, unknown>)[key]);
  return twin as Message;
}

function transferTwin(t: IncomingDelivery): IncomingDelivery {
  const twin = new IncomingDelivery(
    NOTHING as ReceiverLink,
    t.id,
    NOTHING as Uint8Array,
    NOTHING as Uint8Array,
    t.messageFormat,
    t.remoteSettled,
    t.settleSecond,
    undefined,
  );
  twin.settled = t.settled;
  return twin;
}

/**
 * The twins kept, process-wide: one arrival's worth, replaced by each receiver's first, and one
 * receiver with its engine link (their classes die too while no receiver is open, as in a process
 * that sends between its receives), built once.
 */
const kept: {
  delivery: Delivery<unknown> | undefined;
  receiver: object | undefined;
  link: object | undefined;
} = { delivery: undefined, receiver: undefined, link: undefined };

/**
 * A receiver's first arrival `newest`, and `transfer` the transfer it came on (its dedup fields set);
 * `receiverTwin` builds a Receiver holding nothing (receiver.ts: this module imports no Receiver).
 */
export function keepShapesOf(
  newest: Delivery<unknown>,
  transfer: IncomingDelivery,
  receiverTwin: (nothing: object) => object,
): void {
  // fields set by the constructors alone, as every later write keeps the map: a fresh one will do
  kept.receiver ??= receiverTwin(NOTHING);
  kept.link ??= new ReceiverLink(NOTHING as Session, '', 0, 'detached');
  const t = transferTwin(transfer);
  const twin = new Delivery(
    NOTHING as DeliveryOwner,
    t,
    messageTwin(newest.message) as ReceivedMessage<unknown>,
  );
  twin.dedupKey = hollow(newest.dedupKey) as string | undefined;
  twin.dedupRow = newest.dedupRow;
  t.context = twin;
  kept.delivery = twin;
}

/** @internal for tests: the twin kept now. */
export function keptTwin(): Delivery<unknown> | undefined {
  return kept.delivery;
}
