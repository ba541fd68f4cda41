import type { MemberCommand } from './types.js';

/**
 * V8 flags every cluster member run by this Node binary starts with.
 *
 * `--initial-old-space-size=256`: a member's old generation limit starts at 256 MB instead of
 * V8's small default. A follower makes little JavaScript garbage but allocates ~3 KB of
 * ArrayBuffer bytes per replicated message (socket reads, framing copies), which V8 counts
 * against that limit, so with the default it ran a full collection every ~10 MB of buffers
 * (5-21 per member in a bench run; with the flag 2 in every run, as many as the leader). Measured in
 * docs/cluster-member.md#member-initial-old-space: a follower's CPU per message sent 8.0 against
 * 12.0 us, follower/leader 0.55 against 0.71, at ~40 MB more peak RSS a member (dead buffers wait
 * longer for their collection); V8's heap ceiling, and so the memory alarm's default, unchanged.
 *
 * Placed before the command's own arguments, so a flag the operator gives the supervisor's Node
 * (forwarded by `quorate-broker cluster`) comes later and wins.
 */
export const MEMBER_V8_FLAGS: readonly string[] = ['--initial-old-space-size=256'];

/** `command` with MEMBER_V8_FLAGS added when it runs this Node binary (any other command as given). */
export function withMemberV8Flags(command: MemberCommand): MemberCommand {
  if (command.command !== process.execPath) return command;
  return { ...command, args: [...MEMBER_V8_FLAGS, ...command.args] };
}
