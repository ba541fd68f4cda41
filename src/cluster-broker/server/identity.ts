/**
 * Identity scoped by user (docs/security.md#identity): the names a client picks (container-id,
 * link name) and the nodes its links make (dynamic nodes, topic subscriptions) belong to the user
 * who logged in, so another user choosing the same names can never end, take or read them.
 *
 * - The link key (`containerId/linkName`) names a link's consumer in the replicated state, the
 *   owner of its dynamic node, and which link a re-attach steals from. For a connection that
 *   logged in it starts with the user: `@<user, URI-encoded>/<containerId>/<linkName>`; two users
 *   never share a key, so no stealing, releasing or adoption crosses users. An anonymous
 *   connection keeps `containerId/linkName` (unchanged), escaped as `@/<containerId>/<linkName>`
 *   when its container-id itself starts with `@`, so no anonymous key can equal a user's.
 * - A node a logged-in user's link made records that user (`QueueOptions.ownerUser`, replicated,
 *   so every member enforces it): only that user may receive from it or attach a subscription
 *   under its name. A node without an owner user (made anonymously, or before owners were
 *   recorded) is shared as before.
 */
import type { AmqpErrorBody } from '../../codec/index.js';
import type { QueueOptions } from '../core/events.js';

/** Marks a user-scoped link key (and escapes an anonymous container-id starting with it). */
const USER_MARK = '@';

/** The key of link `linkName` of a connection from `containerId` logged in as `user` (undefined: anonymous). */
export function scopedLinkKey(user: string | undefined, containerId: string, linkName: string): string {
  if (user !== undefined) return `${USER_MARK}${encodeURIComponent(user)}/${containerId}/${linkName}`;
  if (containerId.startsWith(USER_MARK)) return `${USER_MARK}/${containerId}/${linkName}`;
  return `${containerId}/${linkName}`;
}

/** `options` with the owner user recorded when the connection logged in. */
export function withOwnerUser(options: QueueOptions, user: string | undefined): QueueOptions {
  return user === undefined ? options : { ...options, ownerUser: user };
}

/**
 * Why `user` may not use the node whose options are `options` (another user made it), or
 * undefined when it may (no such node, no owner recorded, or its own).
 */
export function notOwner(
  options: QueueOptions | undefined,
  user: string | undefined,
  queue: string,
): AmqpErrorBody | undefined {
  const owner = options?.ownerUser;
  if (owner === undefined || owner === user) return undefined;
  const who = user === undefined ? 'anonymous' : `user '${user}'`;
  return {
    condition: 'amqp:unauthorized-access',
    description: `'${queue}' belongs to another user; ${who} may not use it`,
  };
}
