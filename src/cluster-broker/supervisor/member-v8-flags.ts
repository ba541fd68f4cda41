import { availableParallelism } from 'node:os';
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

/**
 * V8's collector on the main thread alone: no parallel scavenges, no concurrent marking or
 * sweeping. Added when the members one supervisor runs are at least as many as the host's cores
 * (memberV8Flags).
 */
export const SINGLE_THREADED_GC = '--single-threaded-gc';

/**
 * The V8 flags for a member when `members` brokers share a host of `cores` cores: MEMBER_V8_FLAGS,
 * plus SINGLE_THREADED_GC once the members fill the cores. V8's helper threads exist to use cores
 * the main thread leaves idle; with a member per core there are none, and the helpers' work (and
 * their handing it back and forth) only takes CPU from the other members. Measured in
 * docs/cluster-member.md#member-single-threaded-gc: 3 members on 2 cores, medians of 12 alternated
 * runs, spent 12 % less CPU per message received (all members; the costlier follower 16 % less)
 * and 8 % less sent, with collection pauses no longer than with the helpers. An operator who wants
 * the helpers anyway gives `--no-single-threaded-gc`, which comes later and wins.
 */
export function memberV8Flags(members: number, cores: number = availableParallelism()): readonly string[] {
  return members >= cores ? [...MEMBER_V8_FLAGS, SINGLE_THREADED_GC] : MEMBER_V8_FLAGS;
}

/**
 * `command` with the V8 flags for a member of `members` on this host added when it runs this
 * Node binary (any other command as given).
 */
export function withMemberV8Flags(command: MemberCommand, members: number): MemberCommand {
  if (command.command !== process.execPath) return command;
  return { ...command, args: [...memberV8Flags(members), ...command.args] };
}
