/**
 * The message-id (and correlation-id) of a message, and the one canonical key by which the
 * client's receivers and the broker's queues deduplicate it (docs/delivery-contract.md).
 */
import type { TypedValue } from './values.js';

/** a message-id / correlation-id: string, ulong (number, or bigint beyond 2^53), Typed uuid, binary */
export type MessageId = string | number | bigint | Uint8Array | TypedValue;

function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
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
  if (typeof id === 'string') return `string:${id}`;
  if (id instanceof Uint8Array) return `binary:${hex(id)}`;
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
    if (value instanceof Uint8Array) return `${type}:${hex(value)}`;
    const intText = integerText(value);
    if (intText !== undefined) return `${type}:${intText}`;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      return `${type}:${String(value)}`;
    }
    if (value instanceof Date) return `${type}:${value.getTime()}`;
    return `${type}:${safeStringify(value)}`;
  }
  if (typeof id === 'boolean') return `boolean:${id}`;
  return `other:${safeStringify(id)}`;
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
