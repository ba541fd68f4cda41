/**
 * Cluster-wide consumer keys. The server names a consumer `containerId/linkName` (the link key);
 * in the replicated state a cluster member qualifies it with its own id and incarnation:
 *
 *   `<member id>@<incarnation>|<containerId>/<linkName>`
 *
 * so the log can release every consumer of a member that died or restarted (release-owner), and a
 * link re-attached on another member can take over from its predecessor (claim) without the two
 * attachments ever sharing acquisitions.
 */

const MEMBER_ID = /^[A-Za-z0-9_.-]{1,64}$/;

export function isValidMemberId(id: string): boolean {
  return MEMBER_ID.test(id);
}

/** `<member>@<incarnation>`: one process of one member (also the origin of its log entries). */
export function processKey(member: string, incarnation: string): string {
  return `${member}@${incarnation}`;
}

export function qualifyConsumer(processId: string, linkKey: string): string {
  return `${processId}|${linkKey}`;
}

/** The link key of a qualified consumer key (the whole key when it is not qualified). */
export function linkKeyOf(consumer: string): string {
  const bar = consumer.indexOf('|');
  return bar < 0 ? consumer : consumer.slice(bar + 1);
}

/** The `<member>@<incarnation>` part of a qualified key, or undefined. */
export function processOf(consumer: string): string | undefined {
  const bar = consumer.indexOf('|');
  return bar < 0 ? undefined : consumer.slice(0, bar);
}

/** The member id of a qualified key, or undefined. */
export function memberOf(consumer: string): string | undefined {
  const p = processOf(consumer);
  return p === undefined ? undefined : memberOfProcess(p);
}

/** The member id of a `<member>@<incarnation>` (an owner record's holder), or undefined. */
export function memberOfProcess(processId: string): string | undefined {
  const at = processId.indexOf('@');
  return at < 0 ? undefined : processId.slice(0, at);
}

/** A fresh incarnation id for this process (time + randomness: unique across restarts). */
export function newIncarnation(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 4)
    .toString(36)
    .padStart(4, '0')}`;
}
