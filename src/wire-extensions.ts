/**
 * quorate's own extensions to the AMQP wire, in the one place both roles take them from: the
 * broker writes them, the client reads them (docs/membership.md, docs/failover.md).
 *
 * - Membership: the Open frame's `failover-server-list` property, the `$cluster/membership` feed
 *   (offered with the `quorate:membership` capability) and the `info` of an
 *   `amqp:connection:redirect` error all carry the same list of maps (symbol keys `network-host`,
 *   `port`, `scheme`, `hostname`, plus our `quorate:member-id`, `quorate:quorate`,
 *   `quorate:leader`). `memberListValue()` encodes one; `parseMemberList()` decodes one.
 * - Not quorate: a member that cannot commit closes with `amqp:connection:forced` and a
 *   description starting "not quorate" (`notQuorateDescription()`); `isNotQuorate()` recognises it.
 * - Dedup: the `quorate:dedup` link capability; held unsettled: `quorate:hold-unsettled`.
 * - Cluster id: the Open frame's `quorate:cluster-id` property (`--cluster-id`): a federation
 *   link learns which cluster its upstream is (docs/federation.md#loops).
 *
 * Decoding is liberal on purpose: maps may arrive as plain objects (string keys) or as `Map`s
 * whose keys are strings or symbol-typed values; values may be plain or Typed wrappers; `port` may
 * be an int, a bigint or a string. Entries that cannot be used (no host, bad port) are skipped and
 * counted.
 */
import { symbol } from './codec/typed.js';
import type { AmqpValue } from './codec/values.js';
import { AmqpError } from './errors.js';

/** The Open `properties` key of the member list (docs/membership.md#open-frame). */
export const FAILOVER_SERVER_LIST = 'failover-server-list';
/** The Open capability that says the membership feed exists (docs/membership.md). */
export const MEMBERSHIP_CAPABILITY = 'quorate:membership';
/** The source address of the live membership feed (docs/membership.md#feed). */
export const MEMBERSHIP_ADDRESS = '$cluster/membership';

/**
 * The link capability a sender lists in its attach's desired-capabilities to have the broker
 * drop a message whose message-id it already enqueued on that queue (the quorate client always
 * does: its failover re-sends rely on it). Our broker offers it back when it honours it.
 */
export const DEDUP_CAPABILITY = 'quorate:dedup';

/**
 * The link capability a receiver lists in its attach's desired-capabilities to have what it holds
 * unsettled, when its link goes away without settling it (connection lost, member died), wait
 * for the same link (container-id + link name) for a while instead of going to any consumer
 * (docs/delivery-contract.md#held-unsettled). Our broker offers it back when it honours it.
 */
export const HOLD_UNSETTLED_CAPABILITY = 'quorate:hold-unsettled';

/**
 * The terminus capability that makes an address a topic (docs/topics.md): on a sender's target a
 * publish to every subscription, on a receiver's source a subscription (the Qpid JMS and
 * Artemis convention, so rhea and Proton clients get topics by setting it).
 */
export const TOPIC_CAPABILITY = 'topic';
/** Terminus durability `unsettled-state` (spec 3.5.5): with expiry-policy `never`, a durable subscription. */
export const DURABLE_UNSETTLED_STATE = 2;
/** Terminus expiry-policy of a durable subscription (spec 3.5.6). */
export const EXPIRY_NEVER = 'never';
/** The Open `properties` key naming the broker's cluster id (docs/federation.md#loops). */
export const CLUSTER_ID_PROPERTY = 'quorate:cluster-id';

/** The keys of one member map. */
const KEY = {
  host: 'network-host',
  port: 'port',
  scheme: 'scheme',
  hostname: 'hostname',
  memberId: 'quorate:member-id',
  quorate: 'quorate:quorate',
  leader: 'quorate:leader',
  wsUrl: 'quorate:ws-url',
} as const;

/** The schemes of AMQP over TCP. */
export type TcpScheme = 'amqp' | 'amqps';
/** The schemes of AMQP over WebSocket (docs/websocket.md). */
export type WebSocketScheme = 'ws' | 'wss';
/** Every scheme the client dials. */
export type AmqpScheme = TcpScheme | WebSocketScheme;

export function isAmqpScheme(s: string): s is AmqpScheme {
  return s === 'amqp' || s === 'amqps' || isWebSocketScheme(s);
}

export function isWebSocketScheme(s: string): s is WebSocketScheme {
  return s === 'ws' || s === 'wss';
}

/** A `ws://host:port` or `wss://...` URL (what a member lists under `quorate:ws-url`). */
export function isWebSocketUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return isWebSocketScheme(u.protocol.slice(0, -1)) && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Where a member serves AMQP over WebSocket (the `quorate:ws-url` of its map). */
export interface WebSocketEndpoint {
  scheme: WebSocketScheme;
  host: string;
  /** absent: the default port of the scheme */
  port?: number;
}

export interface MemberInfo {
  host: string;
  /** absent: the default port of the scheme the client ends up using */
  port?: number;
  scheme?: AmqpScheme;
  hostname?: string;
  memberId?: string;
  quorate?: boolean;
  leader?: boolean;
  /** The member's AMQP-over-WebSocket endpoint, when it listed one. */
  webSocket?: WebSocketEndpoint;
}

export interface ParsedMemberList {
  members: MemberInfo[];
  /** entries that were present but unusable (skipped) */
  invalid: number;
}

function isTypedLike(v: unknown): v is { type: string; value: unknown } {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Map) &&
    !(v instanceof Uint8Array) &&
    typeof (v as { type?: unknown }).type === 'string' &&
    'value' in v
  );
}

/** Strip Typed wrappers (symbol, ushort, list, map, described...) down to the plain value. */
export function unwrapValue(v: unknown): unknown {
  let cur = v;
  for (let depth = 0; depth < 8 && isTypedLike(cur); depth++) cur = cur.value;
  return cur;
}

/** Look a key up in a decoded map: a plain object, or a Map keyed by strings or Typed symbols. */
export function mapGet(map: unknown, key: string): unknown {
  const m = unwrapValue(map);
  if (m instanceof Map) {
    if (m.has(key)) return unwrapValue(m.get(key));
    for (const [k, v] of m) if (unwrapValue(k) === key) return unwrapValue(v);
    return undefined;
  }
  if (typeof m === 'object' && m !== null && !Array.isArray(m) && !(m instanceof Uint8Array)) {
    return Object.hasOwn(m, key) ? unwrapValue((m as Record<string, unknown>)[key]) : undefined;
  }
  return undefined;
}

function asString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  return undefined;
}

function asPort(v: unknown): number | undefined | 'invalid' {
  if (v === undefined || v === null) return undefined;
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'bigint') n = Number(v);
  else if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) n = Number(v.trim());
  else return 'invalid';
  return Number.isInteger(n) && n > 0 && n <= 65535 ? n : 'invalid';
}

function asBoolean(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 1) return true;
  if (v === 'false' || v === 0) return false;
  return undefined;
}

/** A listed `quorate:ws-url`; undefined when absent or unusable (the member is kept without it). */
function parseWebSocketUrl(raw: string | undefined): WebSocketEndpoint | undefined {
  if (raw === undefined || !isWebSocketUrl(raw)) return undefined;
  const u = new URL(raw);
  const endpoint: WebSocketEndpoint = {
    scheme: u.protocol.slice(0, -1) as WebSocketScheme,
    host: u.hostname.replace(/^\[(.*)\]$/, '$1'),
  };
  if (u.port !== '') endpoint.port = Number(u.port);
  return endpoint;
}

/** One member map; undefined when unusable. */
export function parseMember(entry: unknown): MemberInfo | undefined {
  const rawHost = asString(mapGet(entry, KEY.host));
  if (rawHost === undefined) return undefined;
  const host = rawHost.trim().replace(/^\[(.*)\]$/, '$1');
  if (host === '') return undefined;
  const port = asPort(mapGet(entry, KEY.port));
  if (port === 'invalid') return undefined;
  const member: MemberInfo = { host };
  if (port !== undefined) member.port = port;
  const scheme = asString(mapGet(entry, KEY.scheme))?.toLowerCase();
  if (scheme !== undefined) {
    if (!isAmqpScheme(scheme)) return undefined; // not something we can dial
    member.scheme = scheme;
  }
  const hostname = asString(mapGet(entry, KEY.hostname));
  if (hostname !== undefined && hostname !== '') member.hostname = hostname;
  const memberId = asString(mapGet(entry, KEY.memberId));
  if (memberId !== undefined) member.memberId = memberId;
  const quorate = asBoolean(mapGet(entry, KEY.quorate));
  if (quorate !== undefined) member.quorate = quorate;
  const leader = asBoolean(mapGet(entry, KEY.leader));
  if (leader !== undefined) member.leader = leader;
  const webSocket = parseWebSocketUrl(asString(mapGet(entry, KEY.wsUrl)));
  if (webSocket !== undefined) member.webSocket = webSocket;
  return member;
}

/**
 * A membership list. `undefined` when the value is absent (null/undefined) or not a list at all:
 * the pool is then left alone. An empty list parses to `{ members: [] }`.
 */
export function parseMemberList(value: unknown): ParsedMemberList | undefined {
  const list = unwrapValue(value);
  if (!Array.isArray(list)) return undefined;
  const members: MemberInfo[] = [];
  let invalid = 0;
  for (const entry of list) {
    const m = parseMember(entry);
    if (m === undefined) invalid++;
    else members.push(m);
  }
  return { members, invalid };
}

/** The `failover-server-list` property of an Open frame's `properties` (a fields map). */
export function failoverListFromOpenProperties(properties: unknown): ParsedMemberList | undefined {
  if (properties === undefined || properties === null) return undefined;
  return parseMemberList(mapGet(properties, FAILOVER_SERVER_LIST));
}

/** One entry of the member list a member gives clients (docs/membership.md#open-frame). */
export interface ListedMember {
  /** The member's id. */
  id: string;
  /** Host clients dial. */
  host: string;
  /** The member's AMQP (client) port. */
  port: number;
  /** `amqps` when the member serves TLS. */
  scheme: 'amqp' | 'amqps';
  /** Itself: serving (quorate and caught up). Others: heard from recently. */
  quorate: boolean;
  /** The member the lister follows as Raft leader. */
  leader: boolean;
  /** Its AMQP-over-WebSocket URL (`ws://host:port`, `wss://` with TLS), when it serves one. */
  wsUrl?: string;
}

/** The AMQP value of a member list: a list of maps with symbol keys (failover-server-list shape). */
export function memberListValue(members: readonly ListedMember[]): AmqpValue {
  return members.map(
    (m) =>
      new Map<AmqpValue, AmqpValue>([
        [symbol(KEY.host), m.host],
        [symbol(KEY.port), m.port],
        [symbol(KEY.scheme), m.scheme],
        [symbol(KEY.memberId), m.id],
        [symbol(KEY.quorate), m.quorate],
        [symbol(KEY.leader), m.leader],
        ...(m.wsUrl !== undefined ? [[symbol(KEY.wsUrl), m.wsUrl] as [AmqpValue, AmqpValue]] : []),
      ]),
  );
}

/** What every "not quorate" close or refusal says first. */
const NOT_QUORATE = 'not quorate';

/** The description of a member's close or refusal while it is not quorate, with the reason. */
export function notQuorateDescription(reason?: string): string {
  return reason === undefined ? NOT_QUORATE : `${NOT_QUORATE}: ${reason}`;
}

/**
 * A Close that says the member lost quorum (its description says so, or its `info` carries
 * `quorate:quorate: false`): the client tries that member last, after a backoff.
 */
export function isNotQuorate(e: unknown): boolean {
  if (!(e instanceof AmqpError)) return false;
  if (e.condition !== 'amqp:connection:forced') return false;
  if (/not[ -]quorate/i.test(e.description)) return true;
  return e.info?.[KEY.quorate] === false;
}

/*
 * RabbitMQ 4's HTTP-over-AMQP management protocol (docs/management.md), which both roles speak:
 * not our extension but an interop contract, kept here so the broker and the client read the
 * same names. A request goes on a sender link to MANAGEMENT_ADDRESS with `to` = the path,
 * `subject` = the HTTP method, `reply-to` = MANAGEMENT_REPLY_TO (the receiver link of the pair,
 * same link name); the reply carries `correlation-id` = the request's message-id and `subject` =
 * the status code.
 */
/** The management node's address. */
export const MANAGEMENT_ADDRESS = '/management';
/** `reply-to` of a management request: the receiver link paired with the request's link. */
export const MANAGEMENT_REPLY_TO = '$me';
/** The link name RabbitMQ's clients give both links of the pair. */
export const MANAGEMENT_LINK_NAME = 'management-link-pair';
/** Link property both links of the pair carry (RabbitMQ refuses a management link without it). */
export const MANAGEMENT_PAIRED_PROPERTY = 'paired';
/** Application property of a request, and of a reply. */
export const HTTP_REQUEST_PROPERTY = 'http:request';
export const HTTP_RESPONSE_PROPERTY = 'http:response';
/** The version both carry. */
export const HTTP_VERSION = '1.1';
/** The v2 address prefix of a queue (`/queues/NAME`, NAME percent-encoded). */
export const QUEUES_PATH = '/queues/';
/** RabbitMQ's queue arguments we implement (in a declare's `arguments` map). */
export const QUEUE_ARGUMENTS = {
  maxLength: 'x-max-length',
  maxLengthBytes: 'x-max-length-bytes',
  deliveryLimit: 'x-delivery-limit',
  deadLetterQueue: 'x-quorate-dead-letter-queue',
} as const;

/**
 * The queue name of a v2 address (`/queues/NAME`, percent-decoded), the address itself when it is
 * a plain name, or undefined when it is a v2 address that does not decode.
 */
export function queueNameOfAddress(address: string): string | undefined {
  if (!address.startsWith(QUEUES_PATH)) return address;
  const encoded = address.slice(QUEUES_PATH.length);
  if (encoded === '' || encoded.includes('/')) return undefined;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
