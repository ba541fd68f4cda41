/**
 * The message-id (and correlation-id) of a message, and the one canonical key by which the
 * client's receivers and the broker's queues deduplicate it (docs/delivery-contract.md).
 */
import { createHash } from 'node:crypto';
import type { TypedValue } from './values.js';

/**
 * Ids longer than this (characters of a string, bytes of a binary) are keyed by their SHA-256
 * rather than verbatim (docs/delivery-contract.md#message-id-keys): a dedup window then holds a
 * few dozen bytes per message however long its id, and keying costs one hash, not a hex copy.
 */
export const MESSAGE_ID_KEY_MAX = 256;

/** a message-id / correlation-id: string, ulong (number, or bigint beyond 2^53), Typed uuid, binary */
export type MessageId = string | number | bigint | Uint8Array | TypedValue;

function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/**
 * The key of an id of AMQP `type` whose content is `content`: verbatim up to MESSAGE_ID_KEY_MAX,
 * else its digest. `#` never follows a type in a verbatim key, so the two forms cannot collide.
 */
function keyOf(type: string, content: string | Uint8Array): string {
  if (content.length > MESSAGE_ID_KEY_MAX) {
    return `${type}#sha256:${createHash('sha256').update(content).digest('hex')}`;
  }
  return `${type}:${typeof content === 'string' ? content : hex(content)}`;
}

function integerText(v: unknown): string | undefined {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v).toString();
  return undefined;
}

function isTypedLike(v: unknown): v is TypedValue {
  return (
    typeof v === 'object' &&
    v !== null &&
    !(v instanceof Uint8Array) &&
    typeof (v as { type?: unknown }).type === 'string' &&
    'value' in v
  );
}

/**
 * Canonical dedup key: AMQP type and value, so string 'a', symbol 'a' and binary 0x61 differ,
 * while the same typed value always maps to the same key however it is represented (a ulong as
 * number or bigint; a uuid as string in any case, with or without dashes, or as 16 bytes).
 * Plain JS values are typed as the codec would encode them (integer within int32 -> int,
 * other safe integers and bigints -> long, other numbers -> double).
 * Undefined for a missing id (null/undefined): such messages skip dedup.
 */
export function messageIdKey(id: unknown): string | undefined {
  if (id === undefined || id === null) return undefined;
  if (typeof id === 'string') return keyOf('string', id);
  if (id instanceof Uint8Array) return keyOf('binary', id);
  if (typeof id === 'bigint') return `long:${id}`;
  if (typeof id === 'number') {
    if (Number.isInteger(id) && id >= -0x80000000 && id <= 0x7fffffff && !Object.is(id, -0))
      return `int:${id}`;
    if (Number.isSafeInteger(id)) return `long:${id}`;
    return `double:${id}`;
  }
  if (isTypedLike(id)) {
    const { type, value } = id;
    if (type === 'uuid') {
      if (value instanceof Uint8Array) return `uuid:${hex(value)}`;
      if (typeof value === 'string') return `uuid:${value.replace(/-/g, '').toLowerCase()}`;
    }
    if (value instanceof Uint8Array) return keyOf(type, value);
    const intText = integerText(value);
    if (intText !== undefined) return `${type}:${intText}`;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      return keyOf(type, String(value));
    }
    if (value instanceof Date) return `${type}:${value.getTime()}`;
    return keyOf(type, safeStringify(value));
  }
  if (typeof id === 'boolean') return `boolean:${id}`;
  return keyOf('other', safeStringify(id));
}

function safeStringify(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) =>
      typeof x === 'bigint' ? `${x}n` : x instanceof Uint8Array ? `0x${hex(x)}` : x,
    );
  } catch {
    return String(v);
  }
}
