/**
 * The last value one string field decoded, with its UTF-8 bytes: a field that repeats from entry
 * to entry (an entry's origin, an enqueue's queue name) reads back the same string without a new
 * one being made. Every member decodes every replicated entry, so a string per field per entry is
 * garbage made three times in a 3-member cluster.
 *
 * The bytes are kept in a buffer of fixed size, so a field whose value changes costs only the new
 * string (no copy of its bytes is allocated); a value longer than that buffer is never kept.
 */
const KEPT_BYTES = 128;

export class RepeatedString {
  private readonly bytes = new Uint8Array(KEPT_BYTES);
  /** -1: nothing kept. */
  private length = -1;
  private value = '';

  /** The kept string if `buf[start, start + n)` are its bytes, else undefined. */
  lookup(buf: Uint8Array, start: number, n: number): string | undefined {
    if (n !== this.length) return undefined;
    const kept = this.bytes;
    for (let i = 0; i < n; i++) if (buf[start + i] !== kept[i]) return undefined;
    return this.value;
  }

  /** Keeps `value`, decoded from `buf[start, start + n)`. */
  remember(buf: Uint8Array, start: number, n: number, value: string): void {
    if (n > KEPT_BYTES) {
      this.length = -1;
      return;
    }
    const kept = this.bytes;
    for (let i = 0; i < n; i++) kept[i] = buf[start + i]!;
    this.length = n;
    this.value = value;
  }
}
