/**
 * HTTP basic authentication over the broker's own users: the same verification function as
 * SASL PLAIN (users.ts `makeAuthenticator`), so a change of how passwords are stored applies to
 * both at once.
 */
import type { IncomingMessage } from 'node:http';
import { makeAuthenticator, type UserTable } from '../server/users.js';

export type HttpAuthenticator = (req: IncomingMessage) => Promise<boolean>;

/** Undefined users: everything is open. */
export function basicAuthenticator(users: UserTable | undefined): HttpAuthenticator {
  if (users === undefined) return async () => true;
  const verify = makeAuthenticator(users, false);
  return async (req) => {
    const credentials = parseBasic(req.headers.authorization);
    if (!credentials) return false;
    return await verify('PLAIN', credentials);
  };
}

/** `Basic base64(user:password)` -> its parts (split at the first colon, as RFC 7617 says). */
export function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  if (header === undefined) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
