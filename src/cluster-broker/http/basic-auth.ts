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

/**
 * Undefined users: everything is open. With a permissions file, a user must also hold
 * `"monitor": true` there.
 */
export function basicAuthenticator(
  users: UserTable | undefined,
  permissions?: Permissions,
  throttleOptions?: AuthThrottleOptions,
): HttpAuthenticator {
  if (users === undefined) return async () => true;
  const checker = new PasswordChecker(users);
  const throttle = new AuthThrottle(throttleOptions);
  return async (req) => {
    const credentials = parseBasic(req.headers.authorization);
    // no credentials is no guess (a browser's first request): nothing to slow down
    if (!credentials) return false;
    const address = req.socket.remoteAddress ?? '';
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    req.socket.once('close', onClose);
    try {
      const verdict = await checker.verify(credentials.username, credentials.password, {
        address,
        gone: gone.signal,
      });
      if (verdict === 'ok') return mayMonitor(permissions, credentials.username);
      if (verdict === 'gone') return false;
      const delayMs = throttle.failure(address, Date.now());
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
      return false;
    } finally {
      req.socket.off('close', onClose);
    }
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
