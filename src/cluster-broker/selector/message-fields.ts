/**
 * What a selector identifier names in an AMQP message: the JMS header names (mapped onto the AMQP
 * header, properties and annotations as Qpid JMS maps them), else an application property.
 * Values become selector values (numbers, strings, booleans); anything else, or an absent field,
 * is null (unknown).
 */
import type { Message } from '../../codec/message.js';
import type { AmqpValue } from '../../codec/values.js';
import type { SelectorValue } from './parser.js';

const JMS_DEFAULT_PRIORITY = 4;

type Field = (m: Message) => SelectorValue;

const JMS_FIELDS: Record<string, Field> = {
  JMSMessageID: (m) => idText(m.messageId),
  JMSCorrelationID: (m) => idText(m.correlationId),
  JMSPriority: (m) => m.priority ?? JMS_DEFAULT_PRIORITY,
  JMSDeliveryMode: (m) => (m.durable ? 'PERSISTENT' : 'NON_PERSISTENT'),
  JMSTimestamp: (m) => (m.creationTime ? m.creationTime.getTime() : null),
  JMSExpiration: (m) => (m.absoluteExpiryTime ? m.absoluteExpiryTime.getTime() : 0),
  // Qpid JMS carries JMSType in the x-opt-jms-type annotation; other clients use the subject
  JMSType: (m) => value(m.messageAnnotations?.['x-opt-jms-type']) ?? m.subject ?? null,
  JMSRedelivered: (m) => (m.deliveryCount ?? 0) > 0,
  JMSDestination: (m) => m.to ?? null,
  JMSReplyTo: (m) => m.replyTo ?? null,
  JMSXDeliveryCount: (m) => (m.deliveryCount ?? 0) + 1,
  JMSXGroupID: (m) => m.groupId ?? null,
  JMSXGroupSeq: (m) => m.groupSequence ?? null,
  JMSXUserID: (m) => (m.userId ? Buffer.from(m.userId).toString('utf8') : null),
};

/** The value of `name` in `message`. */
export function fieldOf(message: Message, name: string): SelectorValue {
  const jms = JMS_FIELDS[name];
  if (jms !== undefined) return jms(message);
  return value(message.applicationProperties?.[name]);
}

/** A message-id / correlation-id as text: strings as they are, numbers in decimal, uuids canonical, binary hex. */
function idText(id: unknown): SelectorValue {
  if (id === undefined || id === null) return null;
  if (typeof id === 'string') return id;
  if (typeof id === 'number' || typeof id === 'bigint') return String(id);
  if (id instanceof Uint8Array) return Buffer.from(id).toString('hex');
  const v = (id as { value?: unknown }).value;
  return v === undefined ? null : String(v);
}

/** An AMQP value as a selector value (null for types selectors do not compare). */
function value(v: AmqpValue): SelectorValue {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'object' && 'type' in v && 'value' in v) {
    const inner = (v as { value: unknown }).value;
    switch ((v as { type: string }).type) {
      case 'symbol':
      case 'char':
      case 'string':
      case 'boolean':
        return inner as string | boolean;
      case 'ubyte':
      case 'ushort':
      case 'uint':
      case 'ulong':
      case 'byte':
      case 'short':
      case 'int':
      case 'long':
      case 'float':
      case 'double':
        return Number(inner);
      case 'timestamp':
        return inner instanceof Date ? inner.getTime() : null;
      default:
        return null;
    }
  }
  return null;
}
