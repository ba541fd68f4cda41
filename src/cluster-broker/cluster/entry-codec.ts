/**
 * The payload of one Raft log entry of the cluster (see docs/cluster-member.md):
 *
 *   [version u8 = 1][leaderTime f64 BE][kind u8][origin str][seq varint][body]
 *
 * - `origin` = `<member id>@<incarnation>`: the process that submitted it; only that process
 *   resolves its pending submit when the entry applies (a restarted member has a new incarnation,
 *   so old entries replayed during catch-up never resolve its new requests).
 * - `leaderTime` sits at a fixed offset: a follower forwards the request with 0 there and the
 *   leader stamps its own clock into a copy before proposing (forwarded requests are never decoded).
 * - kinds: 1 = a broker event (body = encodeEvent bytes), 2 = release-owner (a member's consumers
 *   of earlier incarnations are gone), 3 = claim (a receiver link attached here: take the consumer
 *   key over from a predecessor on any member, which is detached with amqp:link:stolen),
 *   4 = federation-owner (the process `<member id>@<incarnation>` that runs the cluster's
 *   federation links from now on; docs/federation.md#cluster).
 */
import { ByteReaderError, VarintReader, VarintWriter } from '../core/binary.js';
import { eventSizeHint, readEvent, writeEvent } from '../core/event-codec.js';
import type { BrokerEvent } from '../core/events.js';
import { RepeatedString } from '../core/repeated-string.js';

export const ENTRY_VERSION = 1;
const TIME_OFFSET = 1;

export type EntryBody =
  | { kind: 'event'; event: Uint8Array }
  /** Release every consumer of `member` except those of incarnation `keep` ('' = release all). */
  | { kind: 'release-owner'; member: string; keep: string }
  /** `claimant` (a qualified consumer key) takes over link key `link` from any predecessor. */
  | { kind: 'claim'; link: string; claimant: string }
  /** `owner` (a process key, member@incarnation) runs the federation links from now on. */
  | { kind: 'federation-owner'; owner: string };

export interface ClusterEntry {
  leaderTime: number;
  origin: string;
  seq: number;
  body: EntryBody;
}

/**
 * What encodeEntry takes: a body, or for kind `event` the broker event itself, encoded straight
 * into the entry (no buffer of its own, no copy).
 */
export type EntryRequest = EntryBody | { kind: 'event'; event: BrokerEvent };

const KIND = { event: 1, 'release-owner': 2, claim: 3, 'federation-owner': 4 } as const;

/** Encodes a request (leaderTime 0 until the leader stamps it), in a buffer of its own. */
export function encodeEntry(origin: string, seq: number, body: EntryRequest, leaderTime = 0): Uint8Array {
  const w = new VarintWriter(entrySizeHint(origin, body));
  writeEntry(w, origin, seq, body, leaderTime);
  return w.finish();
}

/** About the bytes of the entry of `body` from `origin` (the writer grows when it is more). */
export function entrySizeHint(origin: string, body: EntryRequest): number {
  return sizeHint(body) + 32 + origin.length * 3;
}

/** Writes the entry of a request at the writer's position (encodeEntry's layout). */
export function writeEntry(
  w: VarintWriter,
  origin: string,
  seq: number,
  body: EntryRequest,
  leaderTime = 0,
): void {
  w.u8(ENTRY_VERSION);
  w.f64(leaderTime);
  w.u8(KIND[body.kind]);
  w.str(origin);
  w.uint(seq);
  switch (body.kind) {
    case 'event':
      if (body.event instanceof Uint8Array) w.raw(body.event);
      else writeEvent(w, body.event);
      break;
    case 'release-owner':
      w.str(body.member);
      w.str(body.keep);
      break;
    case 'claim':
      w.str(body.link);
      w.str(body.claimant);
      break;
    case 'federation-owner':
      w.str(body.owner);
      break;
  }
}

/** About the bytes of a body (the writer grows when it is more). */
function sizeHint(body: EntryRequest): number {
  if (body.kind !== 'event') return 64;
  const e = body.event;
  return e instanceof Uint8Array ? e.length : eventSizeHint(e);
}

/** A copy of `request` with `leaderTime` written in (the leader does this before proposing). */
export function stampEntry(request: Uint8Array, leaderTime: number): Uint8Array {
  const out = new Uint8Array(request.length);
  out.set(request);
  return stampEntryInPlace(out, leaderTime);
}

const timeBytes = new Uint8Array(8);
const timeScratch = new DataView(timeBytes.buffer);

/** Writes `leaderTime` into `request` itself (for bytes nobody else holds); returns it. */
export function stampEntryInPlace(request: Uint8Array, leaderTime: number): Uint8Array {
  if (request.length < TIME_OFFSET + 8 || request[0] !== ENTRY_VERSION) {
    throw new ByteReaderError('not a cluster entry');
  }
  // through one shared scratch, not a DataView per proposed entry
  timeScratch.setFloat64(0, leaderTime, false);
  request.set(timeBytes, TIME_OFFSET);
  return request;
}

export function decodeEntry(bytes: Uint8Array): ClusterEntry {
  return readEntry(bytes, eventBytes);
}

function eventBytes(r: VarintReader, bytes: Uint8Array): Uint8Array {
  return bytes.subarray(r.offset);
}

/** An entry whose event body is an `E` (its bytes, or the event decoded). */
interface EntryOf<E> {
  leaderTime: number;
  origin: string;
  seq: number;
  body: Exclude<EntryBody, { kind: 'event' }> | { kind: 'event'; event: E };
}

/** A decoded entry whose event, if it carries one, is decoded too. */
export type DecodedEntry = EntryOf<BrokerEvent>;

/**
 * decodeEntry, then decodeEvent of an event entry's bytes (their message bytes views of
 * `bytes`), by the one reader: the apply path of every member, once per entry.
 */
export function decodeEntryAndEvent(bytes: Uint8Array): DecodedEntry {
  return readEntry(bytes, eventView);
}

function eventView(r: VarintReader): BrokerEvent {
  return readEvent(r, 'view');
}

/** The origin of the entry read last: entries of one submitter follow each other. */
const lastOrigin = new RepeatedString();

/** The entry layout, an event body read by `event` (from the reader's position to the end). */
function readEntry<E>(bytes: Uint8Array, event: (r: VarintReader, bytes: Uint8Array) => E): EntryOf<E> {
  const r = new VarintReader(bytes);
  const version = r.u8();
  if (version !== ENTRY_VERSION) throw new ByteReaderError(`unknown cluster entry version ${version}`);
  const leaderTime = r.f64();
  const kind = r.u8();
  const origin = r.strRepeated(lastOrigin);
  const seq = r.uint();
  let body: EntryOf<E>['body'];
  switch (kind) {
    case KIND.event:
      body = { kind: 'event', event: event(r, bytes) };
      break;
    case KIND['release-owner']:
      body = { kind: 'release-owner', member: r.str(), keep: r.str() };
      break;
    case KIND.claim:
      body = { kind: 'claim', link: r.str(), claimant: r.str() };
      break;
    case KIND['federation-owner']:
      body = { kind: 'federation-owner', owner: r.str() };
      break;
    default:
      throw new ByteReaderError(`unknown cluster entry kind ${kind}`);
  }
  return { leaderTime, origin, seq, body };
}
