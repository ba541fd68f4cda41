/**
 * The cluster secret: a shared key every member proves it holds when it connects to another
 * (handshake.ts). It lives in a file readable by its owner only, like an Erlang cookie.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { ReplicationError } from './errors.js';

/** Name of the secret `cluster` / `startCluster()` create in their data dir. */
export const CLUSTER_SECRET_FILE_NAME = 'cluster-secret';
/** Shortest secret accepted, in bytes (the generated one has 64 hex characters). */
export const MIN_SECRET_BYTES = 16;

function invalid(description: string): never {
  throw new ReplicationError('amqp:invalid-field', description);
}

/**
 * Reads a secret file: its content without surrounding whitespace. Refuses a file other users
 * may read or write (chmod 600 fixes it), and a secret shorter than MIN_SECRET_BYTES.
 */
export async function loadClusterSecret(file: string): Promise<Uint8Array> {
  let mode: number;
  let text: string;
  try {
    mode = (await stat(file)).mode;
    text = await readFile(file, 'utf8');
  } catch (err) {
    return invalid(`cannot read the cluster secret file ${file}: ${(err as Error).message}`);
  }
  if ((mode & 0o077) !== 0) {
    invalid(
      `the cluster secret file ${file} is accessible by other users (mode ${(mode & 0o777).toString(8)}): chmod 600 ${file}`,
    );
  }
  const secret = Buffer.from(text.trim(), 'utf8');
  if (secret.length < MIN_SECRET_BYTES) {
    invalid(`the cluster secret in ${file} is shorter than ${MIN_SECRET_BYTES} bytes`);
  }
  return secret;
}

/**
 * The secret file in `dir` (created too if needed), made (32 random bytes as hex, mode 0600) if absent; an existing
 * one is kept, so a cluster restarted on the same data dir keeps its secret.
 */
export async function ensureClusterSecret(dir: string): Promise<string> {
  const file = join(dir, CLUSTER_SECRET_FILE_NAME);
  await mkdir(dir, { recursive: true });
  try {
    await writeFile(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return file;
}

/** Is `host` a loopback address (127.0.0.0/8, ::1, localhost)? Only such a cluster may run without a secret. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h) || h === '0:0:0:0:0:0:0:1';
  return false;
}
