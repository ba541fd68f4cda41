/** Whole-value encode/decode in the value model of values.ts. */

import { readDeliveryState, writeDeliveryState } from './composite-codec.js';
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
