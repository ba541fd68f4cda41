/**
 * The SASL PLAIN users file: one `user:HASH` per line, HASH a salted scrypt hash in PHC form
 * (password-hash.ts), written by `quorate-broker passwd FILE USER`. The line splits at the first
 * colon (user names cannot contain one); leading and trailing whitespace is ignored; empty lines
 * and lines starting with `#` are comments. A line whose password is not a `$scrypt$` hash is
 * refused at start: plaintext passwords are never accepted.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BrokerConfigError } from './config-error.js';
import { looksHashed, type PasswordHash, parseHash, verifyPassword } from './password-hash.js';
import { VerificationQueue, type VerificationQueueOptions } from './verification-queue.js';

/** SASL PLAIN users: user name -> salted scrypt hash (see `hashPassword`). */
export type UserTable = ReadonlyMap<string, PasswordHash>;

/** Why `user` cannot be a user name, or undefined when it can. */
export function badUserName(user: string): string | undefined {
  if (user === '') return 'a user name cannot be empty';
  if (user.includes(':')) return 'a user name cannot contain ":"';
  if (/\s/.test(user)) return 'a user name cannot contain whitespace';
  if (user.startsWith('#')) return 'a user name cannot start with "#"';
  return undefined;
}

export function parseUsers(text: string, source = 'users file'): Map<string, PasswordHash> {
  const users = new Map<string, PasswordHash>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const at = `${source} line ${i + 1}`;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new BrokerConfigError(`${at}: expected user:HASH`);
    const user = line.slice(0, colon);
    const secret = line.slice(colon + 1);
    if (!looksHashed(secret)) {
      throw new BrokerConfigError(
        `${at}: the password of '${user}' is not a $scrypt$ hash (plaintext passwords are refused); ` +
          `replace the line with: quorate-broker passwd ${source} ${user}`,
      );
    }
    try {
      users.set(user, parseHash(secret));
    } catch (err) {
      throw new BrokerConfigError(
        `${at}: malformed hash for '${user}' (${(err as Error).message}); ` +
          `set it again with: quorate-broker passwd ${source} ${user}`,
        { cause: err },
      );
    }
  }
  return users;
}

export async function loadUsersFile(path: string): Promise<Map<string, PasswordHash>> {
  return parseUsers(await readFile(path, 'utf8'), path);
}

/**
 * `text` (a users file) with `user`'s line set to `user:hash`: its first line replaced in place,
 * later duplicates dropped, or a line appended. Comments and other users are kept as they are.
 */
export function withUserLine(text: string, user: string, hash: string): string {
  const lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  const out: string[] = [];
  let replaced = false;
  for (const raw of lines) {
    const line = raw.trim();
    const isUser =
      !line.startsWith('#') && line.indexOf(':') > 0 && line.slice(0, line.indexOf(':')) === user;
    if (!isUser) out.push(raw);
    else if (!replaced) {
      out.push(`${user}:${hash}`);
      replaced = true;
    }
  }
  if (!replaced) out.push(`${user}:${hash}`);
  return `${out.join('\n')}\n`;
}

/** Verified for unknown users too, so a missing user costs what a wrong password costs. */
const DUMMY_HASH = parseHash(
  '$scrypt$ln=14,r=8,p=1$cXVvcmF0ZS1kdW1teQ$HdTzXp5Q7t2o0m3WqvN9m0Cw7V1h8qkqV4dFQ6Xh0zA',
);

/**
 * What a password check found: 'ok'; 'wrong' (unknown user or wrong password, indistinguishable);
 * 'busy' (too many checks waiting: refused without checking); 'gone' (the client left while its
 * check waited: dropped without checking).
 */
export type PasswordVerdict = 'ok' | 'wrong' | 'busy' | 'gone';

/** Who asks for a check: its source address (per-address bound) and when it has gone. */
export interface CheckRequester {
  address?: string;
  gone?: AbortSignal;
}

/**
 * Checks PLAIN (and HTTP basic) credentials against a user table. Only a success is remembered,
 * as an HMAC of the length-prefixed user name and the password under a key that lives only in
 * this process, so a reconnect storm after a failover costs one scrypt per user, not one per
 * connection. Anything that does not match a remembered success costs a full scrypt check: a
 * wrong guess is never cheaper than a cold one (docs/security.md#authentication).
 */
export class PasswordChecker {
  private readonly remembered = new Map<string, Buffer>();
  private readonly key = randomBytes(32);
  private readonly queue: VerificationQueue;

  constructor(
    private readonly users: UserTable,
    queue: VerificationQueueOptions = {},
  ) {
    this.queue = new VerificationQueue(queue);
  }

  async check(user: string, password: string, who: CheckRequester = {}): Promise<boolean> {
    return (await this.verify(user, password, who)) === 'ok';
  }

  async verify(user: string, password: string, who: CheckRequester = {}): Promise<PasswordVerdict> {
    const known = this.users.get(user);
    const mac = this.mac(user, password);
    const seen = known === undefined ? undefined : this.remembered.get(user);
    if (seen !== undefined && timingSafeEqual(seen, mac)) return 'ok';
    const slot = await this.queue.acquire(who.address ?? '', who.gone);
    if (slot !== 'granted') return slot;
    try {
      const ok = await verifyPassword(password, known ?? DUMMY_HASH);
      if (ok && known !== undefined) {
        this.remembered.set(user, mac);
        return 'ok';
      }
      return 'wrong';
    } finally {
      this.queue.release();
    }
  }

  /** Length-prefixed, so no (user, password) pair shares its input with another. */
  private mac(user: string, password: string): Buffer {
    const name = Buffer.from(user, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(name.length);
    return createHmac('sha256', this.key).update(length).update(name).update(password, 'utf8').digest();
  }
}
