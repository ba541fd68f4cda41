/**
 * Salted scrypt password hashes in the PHC string format:
 *
 *   $scrypt$ln=14,r=8,p=1$<salt, base64 without padding>$<hash, base64 without padding>
 *
 * `ln` is log2 of scrypt's cost N. The parameters travel with each hash, so a stronger setting
 * can be used for new hashes without invalidating old ones. Hashing and verifying run on libuv's
 * thread pool (node:crypto's async scrypt): the event loop never waits for them.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { BrokerConfigError } from './config-error.js';

/** scrypt cost parameters of a password hash. */
export interface ScryptParams {
  /** log2 of the CPU/memory cost N. */
  ln: number;
  /** Block size. */
  r: number;
  /** Parallelization. */
  p: number;
}

/** N = 2^14, r = 8, p = 1: 16 MiB and tens of milliseconds per hash (node:crypto's own default). */
export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { ln: 14, r: 8, p: 1 };
const SALT_BYTES = 16;
const HASH_BYTES = 32;
/** Bounds on parameters read from a file: a typo must not make every login cost gigabytes. */
const MAX = { ln: 20, r: 32, p: 16 };
const PREFIX = '$scrypt$';

/** A parsed scrypt password hash (`$scrypt$ln=..,r=..,p=..$salt$hash`). */
export interface PasswordHash {
  /** The scrypt parameters it was derived with. */
  params: ScryptParams;
  /** The random salt. */
  salt: Buffer;
  /** The derived key. */
  hash: Buffer;
}

function derive(password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> {
  const N = 2 ** params.ln;
  // scrypt needs 128 * N * r * p bytes; node refuses above maxmem (default 32 MiB)
  const maxmem = 256 * N * params.r * params.p + 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(password, salt, length, { N, r: params.r, p: params.p, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** A new salted hash of `password`, as a PHC string. */
export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT_PARAMS,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, params, HASH_BYTES);
  return formatHash({ params, salt, hash });
}

export function formatHash(h: PasswordHash): string {
  const b64 = (b: Buffer): string => b.toString('base64').replace(/=+$/, '');
  return `${PREFIX}ln=${h.params.ln},r=${h.params.r},p=${h.params.p}$${b64(h.salt)}$${b64(h.hash)}`;
}

/** True when `text` looks like one of our hashes (whether or not it is well-formed). */
export function looksHashed(text: string): boolean {
  return text.startsWith(PREFIX);
}

/** Parses a PHC scrypt string; throws BrokerConfigError saying what is wrong. */
export function parseHash(text: string): PasswordHash {
  const parts = text.split('$');
  // ['', 'scrypt', 'ln=..,r=..,p=..', salt, hash]
  if (parts.length !== 5 || parts[0] !== '' || parts[1] !== 'scrypt') {
    throw new BrokerConfigError(`not a $scrypt$ hash`);
  }
  const params: Partial<Record<keyof ScryptParams, number>> = {};
  for (const kv of parts[2]!.split(',')) {
    const m = /^(ln|r|p)=(\d{1,3})$/.exec(kv);
    if (!m) throw new BrokerConfigError(`bad scrypt parameter '${kv}'`);
    const key = m[1] as keyof ScryptParams;
    const v = Number(m[2]);
    if (v < 1 || v > MAX[key]) throw new BrokerConfigError(`scrypt ${key}=${v} outside 1..${MAX[key]}`);
    params[key] = v;
  }
  if (params.ln === undefined || params.r === undefined || params.p === undefined) {
    throw new BrokerConfigError('scrypt parameters ln, r and p are all required');
  }
  const salt = Buffer.from(parts[3]!, 'base64');
  const hash = Buffer.from(parts[4]!, 'base64');
  if (salt.length < 8 || hash.length < 16) throw new BrokerConfigError('scrypt salt or hash too short');
  return { params: { ln: params.ln, r: params.r, p: params.p }, salt, hash };
}

/** Whether `password` matches `h` (constant-time comparison of the derived keys). */
export async function verifyPassword(password: string, h: PasswordHash): Promise<boolean> {
  const key = await derive(password, h.salt, h.params, h.hash.length);
  return timingSafeEqual(key, h.hash);
}
