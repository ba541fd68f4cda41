/**
 * Every AMQP composite type declared once, as a field table (part 1-5 of the spec, in spec
 * order). Field names are the spec's, the decoded property is their camelCase form. One generic
 * encoder (composite-encode.ts) and decoder (composite-decode.ts) serve them all.
 */

export type FieldType =
  | 'boolean'
  | 'ubyte'
  | 'ushort'
  | 'uint'
  | 'ulong'
  | 'string'
  | 'symbol'
  | 'binary'
  | 'timestamp'
  /** a map with symbol keys (fields, filter-set, node-properties, annotations, footer) as Record<string, AmqpValue> */
  | 'fields'
  /** a map with string keys (application-properties) as Record<string, AmqpValue> */
  | 'string-map'
  /** any value, in the value model of values.ts */
  | '*'
  /** address: string (a symbol is accepted and read as a string), any other value as is */
  | 'address'
  /** message-id / correlation-id: ulong as number|bigint, uuid Typed, binary, string */
  | 'message-id'
  | 'error'
  | 'delivery-state'
  | 'source'
  | 'target';

export interface FieldDef {
  /** spec name, e.g. 'container-id' */
  readonly specName: string;
  /** property name, e.g. 'containerId' */
  readonly name: string;
  readonly type: FieldType;
  readonly mandatory: boolean;
  readonly multiple: boolean;
  /** the spec default, informational: the decoder does not fill it in (see contract.ts) */
  readonly default?: unknown;
}

export type CompositeKind =
  | 'performative'
  | 'sasl'
  | 'section'
  | 'state'
  | 'terminus'
  | 'error'
  | 'txn'
  | 'lifetime';

export interface CompositeDef {
  /** spec name, e.g. 'open', 'sasl-init', 'message-annotations' */
  readonly name: string;
  readonly code: number;
  /** symbolic descriptor, e.g. 'amqp:open:list' */
  readonly symbol: string;
  readonly kind: CompositeKind;
  /** list-based composites: the fields */
  readonly fields: readonly FieldDef[];
  /** restricted (non-list) described types, e.g. data (binary), amqp-value (*), annotations (map) */
  readonly value?: FieldType;
  /** index of the last mandatory field, -1 if none */
  readonly lastMandatory: number;
}

interface FieldOpts {
  mandatory?: boolean;
  multiple?: boolean;
  default?: unknown;
}
const camel = (s: string): string => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const f = (specName: string, type: FieldType, o: FieldOpts = {}): FieldDef => ({
  specName,
  name: camel(specName),
  type,
  mandatory: o.mandatory === true,
  multiple: o.multiple === true,
  ...(o.default === undefined ? {} : { default: o.default }),
});
const M = { mandatory: true };
const MULT = { multiple: true };

export const COMPOSITES: CompositeDef[] = [];
export const BY_CODE = new Map<number, CompositeDef>();
export const BY_SYMBOL = new Map<string, CompositeDef>();
export const BY_NAME = new Map<string, CompositeDef>();

function composite(
  kind: CompositeKind,
  name: string,
  code: number,
  symbol: string,
  fields: FieldDef[],
  value?: FieldType,
): CompositeDef {
  let lastMandatory = -1;
  fields.forEach((fd, i) => {
    if (fd.mandatory) lastMandatory = i;
  });
  const d: CompositeDef = {
    name,
    code,
    symbol,
    kind,
    fields,
    lastMandatory,
    ...(value === undefined ? {} : { value }),
  };
  COMPOSITES.push(d);
  BY_CODE.set(code, d);
  BY_SYMBOL.set(symbol, d);
  BY_NAME.set(name, d);
  return d;
}

const CAPS = [
  f('offered-capabilities', 'symbol', MULT),
  f('desired-capabilities', 'symbol', MULT),
  f('properties', 'fields'),
];

// part 2: transport performatives
export const OPEN = composite('performative', 'open', 0x10, 'amqp:open:list', [
  f('container-id', 'string', M),
  f('hostname', 'string'),
  f('max-frame-size', 'uint', { default: 0xffffffff }),
  f('channel-max', 'ushort', { default: 0xffff }),
  f('idle-time-out', 'uint'),
  f('outgoing-locales', 'symbol', MULT),
  f('incoming-locales', 'symbol', MULT),
  ...CAPS,
]);
export const BEGIN = composite('performative', 'begin', 0x11, 'amqp:begin:list', [
  f('remote-channel', 'ushort'),
  f('next-outgoing-id', 'uint', M),
  f('incoming-window', 'uint', M),
  f('outgoing-window', 'uint', M),
  f('handle-max', 'uint', { default: 0xffffffff }),
  ...CAPS,
]);
export const ATTACH = composite('performative', 'attach', 0x12, 'amqp:attach:list', [
  f('name', 'string', M),
  f('handle', 'uint', M),
  f('role', 'boolean', M),
  f('snd-settle-mode', 'ubyte', { default: 2 }),
  f('rcv-settle-mode', 'ubyte', { default: 0 }),
  f('source', 'source'),
  f('target', 'target'),
  f('unsettled', '*'),
  f('incomplete-unsettled', 'boolean', { default: false }),
  f('initial-delivery-count', 'uint'),
  f('max-message-size', 'ulong'),
  ...CAPS,
]);
export const FLOW = composite('performative', 'flow', 0x13, 'amqp:flow:list', [
  f('next-incoming-id', 'uint'),
  f('incoming-window', 'uint', M),
  f('next-outgoing-id', 'uint', M),
  f('outgoing-window', 'uint', M),
  f('handle', 'uint'),
  f('delivery-count', 'uint'),
  f('link-credit', 'uint'),
  f('available', 'uint'),
  f('drain', 'boolean', { default: false }),
  f('echo', 'boolean', { default: false }),
  f('properties', 'fields'),
]);
export const TRANSFER = composite('performative', 'transfer', 0x14, 'amqp:transfer:list', [
  f('handle', 'uint', M),
  f('delivery-id', 'uint'),
  f('delivery-tag', 'binary'),
  f('message-format', 'uint'),
  f('settled', 'boolean'),
  f('more', 'boolean', { default: false }),
  f('rcv-settle-mode', 'ubyte'),
  f('state', 'delivery-state'),
  f('resume', 'boolean', { default: false }),
  f('aborted', 'boolean', { default: false }),
  f('batchable', 'boolean', { default: false }),
]);
export const DISPOSITION = composite('performative', 'disposition', 0x15, 'amqp:disposition:list', [
  f('role', 'boolean', M),
  f('first', 'uint', M),
  f('last', 'uint'),
  f('settled', 'boolean', { default: false }),
  f('state', 'delivery-state'),
  f('batchable', 'boolean', { default: false }),
]);
export const DETACH = composite('performative', 'detach', 0x16, 'amqp:detach:list', [
  f('handle', 'uint', M),
  f('closed', 'boolean', { default: false }),
  f('error', 'error'),
]);
export const END = composite('performative', 'end', 0x17, 'amqp:end:list', [f('error', 'error')]);
export const CLOSE = composite('performative', 'close', 0x18, 'amqp:close:list', [f('error', 'error')]);
export const ERROR = composite('error', 'error', 0x1d, 'amqp:error:list', [
  f('condition', 'symbol', M),
  f('description', 'string'),
  f('info', 'fields'),
]);

// part 5: SASL
export const SASL_MECHANISMS = composite('sasl', 'sasl-mechanisms', 0x40, 'amqp:sasl-mechanisms:list', [
  f('sasl-server-mechanisms', 'symbol', { mandatory: true, multiple: true }),
]);
export const SASL_INIT = composite('sasl', 'sasl-init', 0x41, 'amqp:sasl-init:list', [
  f('mechanism', 'symbol', M),
  f('initial-response', 'binary'),
  f('hostname', 'string'),
]);
export const SASL_CHALLENGE = composite('sasl', 'sasl-challenge', 0x42, 'amqp:sasl-challenge:list', [
  f('challenge', 'binary', M),
]);
export const SASL_RESPONSE = composite('sasl', 'sasl-response', 0x43, 'amqp:sasl-response:list', [
  f('response', 'binary', M),
]);
export const SASL_OUTCOME = composite('sasl', 'sasl-outcome', 0x44, 'amqp:sasl-outcome:list', [
  f('code', 'ubyte', M),
  f('additional-data', 'binary'),
]);

// part 3: message sections
export const HEADER = composite('section', 'header', 0x70, 'amqp:header:list', [
  f('durable', 'boolean', { default: false }),
  f('priority', 'ubyte', { default: 4 }),
  f('ttl', 'uint'),
  f('first-acquirer', 'boolean', { default: false }),
  f('delivery-count', 'uint', { default: 0 }),
]);
export const DELIVERY_ANNOTATIONS = composite(
  'section',
  'delivery-annotations',
  0x71,
  'amqp:delivery-annotations:map',
  [],
  'fields',
);
export const MESSAGE_ANNOTATIONS = composite(
  'section',
  'message-annotations',
  0x72,
  'amqp:message-annotations:map',
  [],
  'fields',
);
export const PROPERTIES = composite('section', 'properties', 0x73, 'amqp:properties:list', [
  f('message-id', 'message-id'),
  f('user-id', 'binary'),
  f('to', 'address'),
  f('subject', 'string'),
  f('reply-to', 'address'),
  f('correlation-id', 'message-id'),
  f('content-type', 'symbol'),
  f('content-encoding', 'symbol'),
  f('absolute-expiry-time', 'timestamp'),
  f('creation-time', 'timestamp'),
  f('group-id', 'string'),
  f('group-sequence', 'uint'),
  f('reply-to-group-id', 'string'),
]);
export const APPLICATION_PROPERTIES = composite(
  'section',
  'application-properties',
  0x74,
  'amqp:application-properties:map',
  [],
  'string-map',
);
export const DATA = composite('section', 'data', 0x75, 'amqp:data:binary', [], 'binary');
export const AMQP_SEQUENCE = composite('section', 'amqp-sequence', 0x76, 'amqp:amqp-sequence:list', [], '*');
export const AMQP_VALUE = composite('section', 'amqp-value', 0x77, 'amqp:amqp-value:*', [], '*');
export const FOOTER = composite('section', 'footer', 0x78, 'amqp:footer:map', [], 'fields');

// part 3: delivery states and outcomes
export const RECEIVED = composite('state', 'received', 0x23, 'amqp:received:list', [
  f('section-number', 'uint', M),
  f('section-offset', 'ulong', M),
]);
export const ACCEPTED = composite('state', 'accepted', 0x24, 'amqp:accepted:list', []);
export const REJECTED = composite('state', 'rejected', 0x25, 'amqp:rejected:list', [f('error', 'error')]);
export const RELEASED = composite('state', 'released', 0x26, 'amqp:released:list', []);
export const MODIFIED = composite('state', 'modified', 0x27, 'amqp:modified:list', [
  f('delivery-failed', 'boolean'),
  f('undeliverable-here', 'boolean'),
  f('message-annotations', 'fields'),
]);

// part 3: terminus
export const SOURCE = composite('terminus', 'source', 0x28, 'amqp:source:list', [
  f('address', 'address'),
  f('durable', 'uint', { default: 0 }),
  f('expiry-policy', 'symbol', { default: 'session-end' }),
  f('timeout', 'uint', { default: 0 }),
  f('dynamic', 'boolean', { default: false }),
  f('dynamic-node-properties', 'fields'),
  f('distribution-mode', 'symbol'),
  f('filter', 'fields'),
  f('default-outcome', 'delivery-state'),
  f('outcomes', 'symbol', MULT),
  f('capabilities', 'symbol', MULT),
]);
export const TARGET = composite('terminus', 'target', 0x29, 'amqp:target:list', [
  f('address', 'address'),
  f('durable', 'uint', { default: 0 }),
  f('expiry-policy', 'symbol', { default: 'session-end' }),
  f('timeout', 'uint', { default: 0 }),
  f('dynamic', 'boolean', { default: false }),
  f('dynamic-node-properties', 'fields'),
  f('capabilities', 'symbol', MULT),
]);
export const DELETE_ON_CLOSE = composite(
  'lifetime',
  'delete-on-close',
  0x2b,
  'amqp:delete-on-close:list',
  [],
);
export const DELETE_ON_NO_LINKS = composite(
  'lifetime',
  'delete-on-no-links',
  0x2c,
  'amqp:delete-on-no-links:list',
  [],
);
export const DELETE_ON_NO_MESSAGES = composite(
  'lifetime',
  'delete-on-no-messages',
  0x2d,
  'amqp:delete-on-no-messages:list',
  [],
);
export const DELETE_ON_NO_LINKS_OR_MESSAGES = composite(
  'lifetime',
  'delete-on-no-links-or-messages',
  0x2e,
  'amqp:delete-on-no-links-or-messages:list',
  [],
);

// part 4: transactions
export const COORDINATOR = composite('txn', 'coordinator', 0x30, 'amqp:coordinator:list', [
  f('capabilities', 'symbol', MULT),
]);
export const DECLARE = composite('txn', 'declare', 0x31, 'amqp:declare:list', [f('global-id', '*')]);
export const DISCHARGE = composite('txn', 'discharge', 0x32, 'amqp:discharge:list', [
  f('txn-id', 'binary', M),
  f('fail', 'boolean'),
]);
export const DECLARED = composite('state', 'declared', 0x33, 'amqp:declared:list', [
  f('txn-id', 'binary', M),
]);
export const TRANSACTIONAL_STATE = composite(
  'state',
  'transactional-state',
  0x34,
  'amqp:transactional-state:list',
  [f('txn-id', 'binary', M), f('outcome', 'delivery-state')],
);
