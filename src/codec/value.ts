/** Whole-value encode/decode in the value model of values.ts. */

import { AmqpEncodeError } from '../errors.js';
import { readCompositeBody, readDeliveryState, readDescriptor, readField } from './composite-decode.js';
import { writeComposite, writeDeliveryState, writeRestricted } from './composite-encode.js';
import { BY_NAME } from './composites.js';
import type { DeliveryState } from './contract.js';
import { Decoder, decodeError } from './decoder.js';
import { writeValue } from './encode.js';
import type { AmqpValue } from './values.js';
import { scratch } from './writer.js';

/** encode one value with the default mapping (Typed for any other type) */
export function encodeValue(v: AmqpValue): Uint8Array {
  const w = scratch();
  writeValue(w, v);
  return w.copyOut();
}

/** decode exactly one value filling `bytes`; binary values are views into `bytes` */
export function decodeValue(bytes: Uint8Array): AmqpValue {
  const d = new Decoder(bytes);
  const v = d.value();
  if (d.pos !== bytes.length) throw decodeError(`${bytes.length - d.pos} bytes after the value`);
  return v;
}

export function encodeDeliveryState(s: DeliveryState): Uint8Array {
  const w = scratch();
  writeDeliveryState(w, s);
  return w.copyOut();
}

export function decodeDeliveryState(bytes: Uint8Array): DeliveryState | undefined {
  const d = new Decoder(bytes);
  const s = readDeliveryState(d);
  if (d.pos !== bytes.length) throw decodeError(`${bytes.length - d.pos} bytes after the delivery state`);
  return s;
}

/** encode any composite of composites.ts by its spec name (e.g. 'declare', 'source', 'header') */
export function encodeComposite(name: string, body: Record<string, unknown>): Uint8Array {
  const def = BY_NAME.get(name);
  if (def === undefined) throw new AmqpEncodeError(`unknown composite ${name}`);
  const w = scratch();
  if (def.value !== undefined) writeRestricted(w, def, body);
  else writeComposite(w, def, body);
  return w.copyOut();
}

/** decode one described composite of composites.ts: its spec name and decoded body */
export function decodeComposite(bytes: Uint8Array): { name: string; body: unknown } {
  const d = new Decoder(bytes);
  if (d.u8() !== 0x00) throw decodeError('not a described value');
  const def = readDescriptor(d);
  if (def === undefined) throw decodeError('unknown descriptor');
  const body = def.value !== undefined ? readField(d, def.value, def) : readCompositeBody(d, def);
  if (d.pos !== bytes.length) throw decodeError(`${bytes.length - d.pos} bytes after the ${def.name}`);
  return { name: def.name, body };
}
