/**
 * What a Supervisor (supervisor.ts) is given: its members, the restart policy, the ready and
 * stop deadlines, and where members' output goes.
 */
import type { MemberOutputHandler } from './member-process.js';
import type { RestartPolicy, SupervisorLogger, SupervisorMemberSpec } from './types.js';

export interface SupervisorOptions {
  members: readonly SupervisorMemberSpec[];
  /**
   * Restart a member that dies unexpectedly (crash, or killed by PID from outside), with
   * exponential backoff. Default true. Members killed through `kill(id)` stay down regardless,
   * unless `kill(id, { restart: true })`.
   */
  autoRestart?: boolean;
  restartPolicy?: Partial<RestartPolicy>;
  /** A member without a ready line this long after its spawn is killed (a crash). Default 60_000. */
  readyTimeoutMs?: number;
  /** SIGTERM grace before SIGKILL in `stop()` and `restart(id)`. Default 10_000. */
  stopTimeoutMs?: number;
  logger?: SupervisorLogger;
  /**
   * Receives members' stdout (other than the ready line) and stderr lines. Default: the logger
   * (stdout at debug, stderr at info, with `{ member, pid, line }`).
   */
  onMemberOutput?: MemberOutputHandler;
}
