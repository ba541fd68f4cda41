import { RestartBackoff } from './backoff.js';
import { SupervisorError } from './errors.js';
import type { MemberProcess } from './member-process.js';
import { RestartLimit } from './restart-limit.js';
import type { MemberReadyLine, MemberState, RestartPolicy, SupervisorMemberSpec } from './types.js';

/** Why the supervisor itself ended a member's current process. */
export type PlannedExit = 'hold' | 'respawn' | 'crash';

export interface MemberRecord {
  spec: SupervisorMemberSpec;
  process: MemberProcess | undefined;
  state: MemberState;
  readyLine: MemberReadyLine | undefined;
  /** Whether the last ready line said `wss://`: the WebSocket URL keeps it while the member restarts. */
  wsTls: boolean;
  readyAt: number;
  restarts: number;
  started: boolean;
  plannedExit: PlannedExit | undefined;
  restartTimer: NodeJS.Timeout | undefined;
  readyTimer: NodeJS.Timeout | undefined;
  backoff: RestartBackoff;
  limit: RestartLimit;
  /** Set when the supervisor killed the current process for not being ready in time (a failure). */
  readyTimedOut: boolean;
  /** The current or last process's last stderr line. */
  lastOutput: string | undefined;
  /** How the last process ended, for error messages. */
  lastExit: string | undefined;
  /** Called on every state change, so waiters can re-check. */
  watchers: Set<() => void>;
}

export function createMemberRecord(spec: SupervisorMemberSpec, policy: RestartPolicy): MemberRecord {
  return {
    spec,
    process: undefined,
    state: 'dead',
    readyLine: undefined,
    wsTls: false,
    readyAt: 0,
    restarts: 0,
    started: false,
    plannedExit: undefined,
    restartTimer: undefined,
    readyTimer: undefined,
    backoff: new RestartBackoff(policy),
    limit: new RestartLimit(policy),
    readyTimedOut: false,
    lastOutput: undefined,
    lastExit: undefined,
    watchers: new Set(),
  };
}

/** Changes a member's state and wakes whoever waits on it. */
export function setMemberState(record: MemberRecord, state: MemberState): void {
  record.state = state;
  for (const watcher of [...record.watchers]) watcher();
}

/**
 * Resolves once the member is ready; rejects when it is dead (and not coming back) or after
 * `timeoutMs`. A member restarting after a crash is waited for.
 */
export function waitForMemberReady(record: MemberRecord, timeoutMs: number): Promise<void> {
  const id = record.spec.id;
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      if (record.readyLine !== undefined && record.state !== 'dead') {
        finish();
        resolve();
        return true;
      }
      if (record.state === 'dead' && record.process === undefined) {
        finish();
        const why = record.lastExit === undefined ? '' : `: ${record.lastExit}`;
        reject(new SupervisorError('amqp:illegal-state', `member ${id} is dead (not restarting)${why}`));
        return true;
      }
      return false;
    };
    const timer = setTimeout(() => {
      finish();
      reject(
        new SupervisorError('amqp:resource-limit-exceeded', `member ${id} not ready within ${timeoutMs} ms`),
      );
    }, timeoutMs);
    const watcher = (): void => {
      check();
    };
    const finish = (): void => {
      clearTimeout(timer);
      record.watchers.delete(watcher);
    };
    if (!check()) record.watchers.add(watcher);
  });
}
