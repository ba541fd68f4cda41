/**
 * The paths of queue management (docs/management.md#the-protocol): the AMQP management node's
 * `to`, and the HTTP API's, which serves the same paths under `/api` (docs/management.md#http).
 */

/** What a management path names (parseManagementPath). */
export type ManagementRoute =
  | { kind: 'queues' }
  | { kind: 'queue'; name: string }
  | { kind: 'messages'; name: string }
  | { kind: 'subscriptions' }
  | { kind: 'subscription'; name: string }
  | { kind: 'bad'; reason: string };

/**
 * Paths: `/queues`, `/queues/NAME`, `/queues/NAME/messages`, `/subscriptions`, `/subscriptions/NAME`
 * (NAME percent-encoded); any other is `bad`, its reason naming `shown` (the path as the client
 * wrote it, when a front end serves these paths under a prefix).
 */
export function parseManagementPath(path: string, shown = path): ManagementRoute {
  const none = { kind: 'bad', reason: `no resource at '${shown}'` } as const;
  const parts = path.split('/');
  if (parts[0] !== '' || parts.length < 2 || parts.length > 4) return none;
  let name: string | undefined;
  if (parts[2] !== undefined) {
    try {
      name = decodeURIComponent(parts[2]);
    } catch {
      return { kind: 'bad', reason: `'${parts[2]}' is not a percent-encoded queue name` };
    }
    if (name === '') return none;
  }
  if (parts[1] === 'queues') {
    if (name === undefined) return { kind: 'queues' };
    if (parts.length === 3) return { kind: 'queue', name };
    return parts[3] === 'messages' ? { kind: 'messages', name } : none;
  }
  if (parts[1] === 'subscriptions' && parts.length <= 3)
    return name === undefined ? { kind: 'subscriptions' } : { kind: 'subscription', name };
  return none;
}
