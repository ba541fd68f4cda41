/**
 * The file storage's `meta.json` (file-storage.ts): cluster id, member id, term, vote and the
 * recovering mark, with a checksum so a damaged file is found rather than trusted.
 */
import { crc32 } from '../files/crc32.js';
import type { RecoveryReason } from './raft/types.js';
import { isCountable } from './safe-numbers.js';

export interface Meta {
  clusterId: string;
  memberId: string;
  term: number;
  vote: string | null;
  recovering?: RecoveryReason;
}

function metaCrc(m: Meta): number {
  // over the JSON's UTF-8 bytes (the checksum zlib.crc32 gives the string itself)
  return crc32(Buffer.from(JSON.stringify([m.clusterId, m.memberId, m.term, m.vote, m.recovering ?? null])));
}

export function encodeMeta(m: Meta): Buffer {
  return Buffer.from(JSON.stringify({ ...m, crc: metaCrc(m) }));
}

/** The metadata, or why it cannot be trusted. */
export function decodeMeta(b: Buffer): Meta | string {
  let v: unknown;
  try {
    v = JSON.parse(b.toString('utf8'));
  } catch {
    return 'not valid JSON';
  }
  const o = v as Partial<Meta> & { crc?: unknown };
  if (typeof o !== 'object' || o === null) return 'not an object';
  if (typeof o.clusterId !== 'string' || typeof o.memberId !== 'string') return 'no cluster or member id';
  if (typeof o.term !== 'number' || !isCountable(o.term))
    return `term ${String(o.term)} is not a safe integer`;
  if (o.vote !== null && typeof o.vote !== 'string') return 'bad vote';
  if (o.recovering !== undefined && o.recovering !== 'damaged' && o.recovering !== 'blank')
    return 'bad recovering mark';
  const meta: Meta = {
    clusterId: o.clusterId,
    memberId: o.memberId,
    term: o.term,
    vote: o.vote ?? null,
    ...(o.recovering ? { recovering: o.recovering } : {}),
  };
  if (o.crc !== metaCrc(meta)) return 'checksum mismatch';
  return meta;
}
