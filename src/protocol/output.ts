/** Output helpers: how the engine's frames are handed to the adapter. */

/** Payloads at least this big are not copied into frame buffers or coalesced. */
export const COPY_LIMIT = 4096;

/** Merge consecutive buffers smaller than COPY_LIMIT into one; keep big ones as they are. */
export function coalesceSmall(chunks: Uint8Array[]): Uint8Array[] {
  const res: Uint8Array[] = [];
  let i = 0;
  while (i < chunks.length) {
    if (chunks[i].length >= COPY_LIMIT) {
      res.push(chunks[i++]);
      continue;
    }
    let j = i;
    let size = 0;
    while (j < chunks.length && chunks[j].length < COPY_LIMIT) size += chunks[j++].length;
    if (j - i === 1) {
      res.push(chunks[i]);
    } else {
      const buf = Buffer.allocUnsafe(size);
      let o = 0;
      for (let k = i; k < j; k++) {
        buf.set(chunks[k], o);
        o += chunks[k].length;
      }
      res.push(buf);
    }
    i = j;
  }
  return res;
}
