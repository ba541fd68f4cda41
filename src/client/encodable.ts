/**
 * send()'s guard against silent data loss: the codec maps plain JavaScript values to AMQP types
 * (codec/values.ts), and a few values would come out different from what went in (a Set becomes
 * `{}`, a symbol cannot be written, a getter on a class's prototype is not an own field). Those
 * are an AmqpEncodeError naming the path (`body.items[3]`) instead.
 *
 * Accepted: null, undefined, booleans, numbers, bigints, strings, Uint8Array, Date, the codec's
 * typed wrappers, arrays, Maps, plain objects, and class instances whose data is their own
 * enumerable fields (interfaces and simple classes: what TypeScript application code sends).
 */
import { AmqpEncodeError, Typed } from '../codec/public.js';

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function child(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Built-ins the codec would turn into something else (their data is not in own fields). */
const LOSSY: [new (...args: never[]) => object, string][] = [
  [Set, 'a Set'],
  [WeakSet, 'a WeakSet'],
  [WeakMap, 'a WeakMap'],
  [WeakRef, 'a WeakRef'],
  [Promise, 'a Promise'],
  [RegExp, 'a RegExp'],
  [Error, 'an Error'],
  [ArrayBuffer, 'an ArrayBuffer (wrap it in a Uint8Array)'],
  [DataView, 'a DataView (use a Uint8Array)'],
];

/** The first accessor on `obj`'s prototype chain below Object.prototype, if any. */
function prototypeAccessor(obj: object): string | undefined {
  for (let p = Object.getPrototypeOf(obj); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const [key, d] of Object.entries(Object.getOwnPropertyDescriptors(p))) {
      if (key !== 'constructor' && (d.get || d.set)) return key;
    }
  }
  return undefined;
}

/** Throws AmqpEncodeError naming the first value under `path` that would not survive encoding. */
export function assertEncodable(value: unknown, path: string, seen = new Set<object>()): void {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return;
    case 'symbol':
      throw new AmqpEncodeError(`${path}: a symbol cannot be encoded`);
    case 'function':
      throw new AmqpEncodeError(`${path}: a function cannot be encoded`);
  }
  if (value === null || value instanceof Uint8Array || value instanceof Date || value instanceof Typed)
    return;
  const obj = value as object;
  if (ArrayBuffer.isView(obj))
    throw new AmqpEncodeError(
      `${path}: a ${obj.constructor.name} cannot be encoded (only Uint8Array is binary)`,
    );
  for (const [type, what] of LOSSY) {
    if (obj instanceof type) throw new AmqpEncodeError(`${path}: ${what} cannot be encoded faithfully`);
  }
  if (seen.has(obj)) throw new AmqpEncodeError(`${path}: circular reference`);
  seen.add(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) assertEncodable(obj[i], `${path}[${i}]`, seen);
  } else if (obj instanceof Map) {
    for (const [k, v] of obj) {
      assertEncodable(k, `${path} key`, seen);
      assertEncodable(v, `${path}.get(${typeof k === 'string' ? JSON.stringify(k) : String(k)})`, seen);
    }
  } else {
    const accessor = prototypeAccessor(obj);
    if (accessor !== undefined) {
      throw new AmqpEncodeError(
        `${path}: an instance of ${obj.constructor?.name ?? 'a class'} with accessor '${accessor}' on its prototype would lose it (send a plain object)`,
      );
    }
    if (Object.getOwnPropertySymbols(obj).some((s) => Object.prototype.propertyIsEnumerable.call(obj, s)))
      throw new AmqpEncodeError(`${path}: symbol keys cannot be encoded`);
    for (const [k, v] of Object.entries(obj)) assertEncodable(v, child(path, k), seen);
  }
  seen.delete(obj);
}
