import type { Logger } from '../../common/logger.js';

/**
 * The supervisor's logger (the common {@link Logger}); silent without one. debug: spawn arguments
 * and output; info: members started, ready, stopped; warn: a member exited unexpectedly and is
 * restarted; error: a member could not be started.
 */
export type SupervisorLogger = Logger;

/** How to start one member process (no shell: `command` is executed directly). */
export interface MemberCommand {
  command: string;
  args: readonly string[];
  /** Full environment of the member. Default: the supervisor's own. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** One member as the supervisor knows it. */
export interface SupervisorMemberSpec {
  id: string;
  /** Called for every spawn (first start and each restart). */
  command: () => MemberCommand;
  /** Ports reported by `members()` before the member's ready line says otherwise. */
  amqpPort?: number;
  clusterPort?: number;
  /** Monitoring port reported by `members()` before the ready line says otherwise; absent: none. */
  httpPort?: number;
  /** WebSocket port reported by `members()` before the ready line says otherwise; absent: none. */
  wsPort?: number;
}

/** The JSON line a member prints once it listens (contract of `quorate-broker node`). */
export interface MemberReadyLine {
  ready: true;
  id: string;
  amqpPort: number;
  clusterPort: number;
  pid: number;
  /** Present when the member serves the monitoring endpoints (`--http-port`). */
  httpPort?: number;
  /** Present when the member serves AMQP over WebSocket (`--ws-port`). */
  wsPort?: number;
  /** True when that is `wss://` (the member has a TLS certificate). */
  wsTls?: boolean;
}

/**
 * Where a supervised member process is:
 * - starting: spawned, no ready line yet;
 * - running: printed its ready line;
 * - paused: SIGSTOPped by `pause(id)`;
 * - restarting: exited, a restart is scheduled (backoff) or in progress;
 * - dead: exited and will stay down until `restart(id)` (killed via `kill(id)`, stopped, or
 *   crashed with auto-restart off).
 */
export type MemberState = 'starting' | 'running' | 'paused' | 'dead' | 'restarting';

/** One supervised member, as `ClusterHandle.members()` reports it. */
export interface MemberInfo {
  /** The member's id (`n1`, ...). */
  id: string;
  /** PID of the current process; null while none runs. */
  pid: number | null;
  /** The port clients connect to. */
  amqpPort: number;
  /** The port the other members connect to (through the handle's proxies). */
  clusterPort: number;
  /** `amqp://127.0.0.1:<amqpPort>` */
  url: string;
  /** `http://127.0.0.1:<httpPort>`: its status page and monitoring endpoints; null without. */
  httpUrl: string | null;
  /** `ws://127.0.0.1:<wsPort>` (`wss://` with TLS): AMQP over WebSocket; null without. */
  wsUrl: string | null;
  /** Where the process is (running, paused, dead, ...). */
  state: MemberState;
  /** How many times the member was started again after its first start. */
  restarts: number;
}

/** A member process exited (`member-exit`). */
export interface MemberExit {
  /** The member's id. */
  id: string;
  /** The PID of the process that exited. */
  pid: number;
  /** Its exit code; null when a signal ended it. */
  code: number | null;
  /** The signal that ended it; null when it exited by itself. */
  signal: NodeJS.Signals | null;
  /** True when the supervisor caused it (kill/restart/stop), false for a crash. */
  expected: boolean;
  /** True when the supervisor will start it again on its own. */
  willRestart: boolean;
}

/** A member is being started again (`member-restart`). */
export interface MemberRestart {
  /** The member's id. */
  id: string;
  /** 'crash': automatic restart after an unexpected exit; 'manual': `restart(id)`. */
  reason: 'crash' | 'manual';
  /** Backoff before the new process is spawned (0 for manual restarts). */
  delayMs: number;
  /** Consecutive crashes counted by the backoff (reset once a member stays up long enough). */
  consecutiveCrashes: number;
}

/** The supervisor stopped restarting a member (it stays 'dead' until `restart(id)`). */
export interface MemberFailed {
  /** The member's id. */
  id: string;
  /** Why, for people: the failure count and window, or the refused configuration, and the last exit. */
  reason: string;
  /** Failures counted within the window. */
  failures: number;
  /** The member's last stderr line, if any. */
  lastOutput: string | undefined;
}

/** Typed events of `Supervisor` (eventemitter3 event map). */
export interface SupervisorEvents {
  /** A member printed its ready line (first start or restart). */
  'member-ready': (member: MemberInfo) => void;
  /** A member process exited, expectedly or not. */
  'member-exit': (exit: MemberExit) => void;
  /** A member is being started again. */
  'member-restart': (restart: MemberRestart) => void;
  /** The supervisor gave up restarting a member. */
  'member-failed': (failed: MemberFailed) => void;
}

/** Exponential backoff of automatic restarts. */
export interface RestartPolicy {
  /** First delay after a crash, ms. Default 100. */
  initialDelayMs: number;
  /** Largest delay, ms. Default 5_000. */
  maxDelayMs: number;
  /** Growth per consecutive crash. Default 2. */
  factor: number;
  /** A member that stays ready this long has its crash count reset, ms. Default 10_000. */
  resetAfterMs: number;
  /**
   * Give up on a member (no more automatic restarts, state 'dead') once it has failed this many
   * times within `failureWindowMs`. A failure is an exit the supervisor did not cause, other than
   * by SIGKILL, SIGTERM or SIGINT (someone stopped it: a fault injector, an operator, a test), or
   * a ready timeout. Default 5.
   */
  maxFailures: number;
  /** The window of `maxFailures`, ms. Default 60_000. */
  failureWindowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 5_000,
  factor: 2,
  resetAfterMs: 10_000,
  maxFailures: 5,
  failureWindowMs: 60_000,
};

export function memberHttpUrl(httpPort: number, host = '127.0.0.1'): string {
  return `http://${host}:${httpPort}`;
}
/** The exit code with which a member refuses its configuration: restarting it cannot help. */
export const CONFIG_REFUSED_EXIT_CODE = 2;

export function memberWsUrl(wsPort: number, tls: boolean, host = '127.0.0.1'): string {
  return `${tls ? 'wss' : 'ws'}://${host}:${wsPort}`;
}

export function memberUrl(amqpPort: number, host = '127.0.0.1'): string {
  return `amqp://${host}:${amqpPort}`;
}
