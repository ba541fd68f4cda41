/**
 * HTTP basic authentication over the broker's own users: the same verification function as
 * SASL PLAIN (users.ts `PasswordChecker`), so a change of how passwords are stored applies to
 * both at once, and the same failed-login policy (../server/auth-throttle.ts): a wrong guess
 * costs a full check and is answered after its source address's delay
 * (docs/security.md#authentication).
 */
import type { IncomingMessage } from 'node:http';
import { AuthThrottle, type AuthThrottleOptions } from '../server/auth-throttle.js';
import type { Permissions } from '../server/permission-check.js';
import { mayMonitor } from '../server/permissions.js';
import { PasswordChecker, type UserTable } from '../server/users.js';

export type HttpAuthenticator = (req: IncomingMessage) => Promise<boolean>;

/** The user a request's basic credentials prove, or undefined (none, wrong, or the client left). */
export type HttpUserVerifier = (req: IncomingMessage) => Promise<string | undefined>;

/** Checks basic credentials against `users`, a failed guess delayed per source address. */
export function basicUserVerifier(users: UserTable, throttleOptions?: AuthThrottleOptions): HttpUserVerifier {
  const checker = new PasswordChecker(users);
  const throttle = new AuthThrottle(throttleOptions);
  return async (req) => {
    const credentials = parseBasic(req.headers.authorization);
    // no credentials is no guess (a browser's first request): nothing to slow down
    if (!credentials) return undefined;
    const address = req.socket.remoteAddress ?? '';
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    req.socket.once('close', onClose);
    try {
      const verdict = await checker.verify(credentials.username, credentials.password, {
        address,
        gone: gone.signal,
      });
      if (verdict === 'ok') return credentials.username;
      if (verdict === 'gone') return undefined;
      const delayMs = throttle.failure(address, Date.now());
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
      return undefined;
    } finally {
      req.socket.off('close', onClose);
    }
  };
}

/**
 * Reading: undefined users (`verify`): everything is open. With a permissions file, a user must
 * also hold `"monitor": true` there.
 */
export function basicAuthenticator(
  verify: HttpUserVerifier | undefined,
  permissions?: Permissions,
): HttpAuthenticator {
  if (verify === undefined) return async () => true;
  return async (req) => {
    const user = await verify(req);
    return user !== undefined && mayMonitor(permissions, user);
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
