/**
 * SASL PLAIN users file. Format (documented in the CLI usage): one `user:password` per line,
 * split at the FIRST colon (so passwords may contain colons, user names may not); leading and
 * trailing whitespace of a line is ignored; empty lines and lines starting with `#` are comments.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { AmqpError } from '../../errors.js';
import type { SaslAuthenticator } from '../../protocol/index.js';

/** SASL PLAIN users: user name -> password. */
export type UserTable = ReadonlyMap<string, string>;

export function parseUsers(text: string, source = 'users file'): Map<string, string> {
  const users = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) {
      throw new AmqpError('amqp:invalid-field', `${source} line ${i + 1}: expected user:password`);
    }
    users.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return users;
}

export async function loadUsersFile(path: string): Promise<Map<string, string>> {
  return parseUsers(await readFile(path, 'utf8'), path);
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/**
 * The server's SASL policy: PLAIN against `users` (constant-time compare), ANONYMOUS when
 * `anonymous` is true, everything else refused.
 */
export function makeAuthenticator(users: UserTable | undefined, anonymous: boolean): SaslAuthenticator {
  return (mechanism, identity) => {
    if (mechanism === 'ANONYMOUS') return anonymous;
    if (mechanism !== 'PLAIN' || !users) return false;
    const expected = users.get(identity.username ?? '');
    if (expected === undefined) {
      timingSafeEqual(digest(identity.password ?? ''), digest('')); // same work either way
      return false;
    }
    return timingSafeEqual(digest(identity.password ?? ''), digest(expected));
  };
}

/** Mechanisms to offer, in order of preference. */
export function saslMechanisms(users: UserTable | undefined, anonymous: boolean): string[] {
  const m: string[] = [];
  if (users) m.push('PLAIN');
  if (anonymous) m.push('ANONYMOUS');
  return m;
}
