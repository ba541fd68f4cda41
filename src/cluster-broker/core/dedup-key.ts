/**
 * The canonical dedup key of a message-id: its AMQP type and value as one string, so that
 * string "1" and ulong 1 never collide (docs/delivery-contract.md#dedup-at-apply: key = queue +
 * message-id type and value). Computed by whoever proposes the enqueue event; the state only compares strings.
 *
 * Accepts the codec's value model (plain string / Uint8Array / number / bigint, or a Typed
 * wrapper `{ type, value }` as the decoder returns for ulong and uuid). Returns undefined for no
 * message-id (null/undefined): such messages are never deduplicated.
 */
import type { AmqpValue, TypedValue } from '../../codec/values.js';

function hex(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, '0');
  return s;
}

function scalar(v: unknown): string {
  if (v instanceof Uint8Array) return hex(v);
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? String(v);
}

function isTyped(v: unknown): v is TypedValue {
  return typeof v === 'object' && v !== null && 'type' in v && 'value' in v && typeof v.type === 'string';
}

export function dedupKeyOf(messageId: AmqpValue): string | undefined {
  if (messageId === undefined || messageId === null) return undefined;
  if (typeof messageId === 'string') return `string:${messageId}`;
  if (messageId instanceof Uint8Array) return `binary:${hex(messageId)}`;
  if (isTyped(messageId)) {
    // uuid: normalise the textual form so both representations give one key
    const v =
      messageId.type === 'uuid' && typeof messageId.value === 'string'
        ? messageId.value.toLowerCase()
        : messageId.value;
    if (messageId.type === 'uuid' && v instanceof Uint8Array && v.length === 16) {
      const h = hex(v);
      return `uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    }
    return `${messageId.type}:${scalar(v)}`;
  }
  // A plain number/bigint as message-id (not a legal message-id type on the wire, but keep it distinct).
  if (typeof messageId === 'number' || typeof messageId === 'bigint')
    return `${typeof messageId}:${messageId}`;
  return `other:${scalar(messageId)}`;
}
