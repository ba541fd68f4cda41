/**
 * Keeps the hidden classes of the send path alive between bursts of sends, holding nothing of
 * them: the send-side counterpart of shape-keeper.ts (docs/architecture.md#client-receive-jit).
 *
 * A class's map with its fields is reached from its constructor only by a weak transition, and
 * optimized code holds the maps it checks weakly: once the last outgoing delivery, sender link,
 * Sender, deadline and settled journal entry of a process are gone at a full collection (a burst
 * of sends on a connection that closed), their maps die and V8 throws away every function
 * compiled against them ("weak objects" in --trace-deopt), engine code shared with the receive
 * path included, which then compiles again inside the next receive. So a sender's first send
 * leaves twins here: objects built by the same constructors (the same maps) whose references
 * point at each other or at nothing, so no message, sender or connection is kept.
 */
import type { Message } from '../codec/message.js';
import { ReplayJournal } from '../failover/index.js';
import { ACCEPTED, OutgoingDelivery, SenderLink, type Session } from '../protocol/index.js';
import { Deadline } from './deadline.js';
import { messageTwin } from './shape-keeper.js';

/** What a twin's references point at instead: an object (as the originals), holding nothing. */
const NOTHING: object = Object.freeze({});
const EMPTY = new Uint8Array(0);
const noop = (): void => undefined;

/** The twins kept, process-wide: built once, but the message, replaced by each sender's first. */
const kept: {
  sender?: object;
  delivery?: OutgoingDelivery;
  settled?: object;
  message?: Message;
} = {};

/**
 * Built once, as every later write to them keeps their maps: a Sender, a settled delivery on a
 * sender link, and a settled journal entry (its map gains `outcome`) with a deadline as context.
 */
function keepConstructed(senderTwin: (nothing: object) => object): void {
  kept.sender = senderTwin(NOTHING);
  const link = new SenderLink(NOTHING as Session, '', 0, 'detached');
  const d = new OutgoingDelivery(link, EMPTY, EMPTY, false, 0);
  d.id = 0;
  d.status = 'settled';
  d.written = true;
  d.remoteSettled = true;
  d.remoteState = ACCEPTED;
  d.localState = ACCEPTED;
  d.context = NOTHING;
  kept.delivery = d;
  const journal = new ReplayJournal<object, object>();
  const r = journal.admit(0, NOTHING);
  if (r.kind !== 'reserved') return;
  const entry = journal.append(r.reservation, '', EMPTY, new Deadline(undefined, noop, 'send'));
  kept.settled = journal.settle(entry.seq, ACCEPTED)?.entry;
}

/**
 * A sender's first send, `copy` the library's copy of its message (copyWith: the application's
 * keys, then messageId); `senderTwin` builds a Sender holding nothing (sender.ts: this module
 * imports none).
 */
export function keepSendShapesOf(copy: Message, senderTwin: (nothing: object) => object): void {
  if (kept.sender === undefined) keepConstructed(senderTwin);
  kept.message = messageTwin(copy);
}

/** @internal for tests: the twins kept now. */
export function keptSendTwins(): Readonly<typeof kept> {
  return kept;
}
