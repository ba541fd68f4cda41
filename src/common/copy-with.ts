/**
 * A shallow copy of an object with one property set: the one home for it on hot paths (a sent
 * message's id, a stored message's first-acquirer).
 *
 * Why not `{ ...source, [key]: value }`: once V8 optimizes such a spread that adds a property the
 * source lacks, every copy gets a hidden class of its own (Node 20). The codec reads message
 * fields by name, and on objects whose classes never repeat those reads miss their inline caches
 * every time: encoding a sent message took 5x longer. Copying first and assigning after keeps one
 * class per source shape.
 */
export function copyWith<T extends object, K extends PropertyKey, V>(
  source: T | undefined,
  key: K,
  value: V,
): T & Record<K, V> {
  const copy = Object.assign({}, source) as T & Record<K, V>;
  (copy as Record<K, V>)[key] = value;
  return copy;
}
