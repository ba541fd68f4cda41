import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { SupervisorError } from './errors.js';
import { withMemberV8Flags } from './member-v8-flags.js';
import type { MemberCommand, MemberReadyLine, SupervisorLogger } from './types.js';

export interface MemberProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all (ENOENT, EACCES, ...). */
  spawnError?: Error;
}

/** Where a member's output lines go (besides the ready line, which the supervisor consumes). */
export type MemberOutputHandler = (id: string, stream: 'stdout' | 'stderr', line: string) => void;

/** Parses one stdout line; returns the ready line if it is one (the first JSON `{"ready":true}`). */
export function parseReadyLine(line: string): MemberReadyLine | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (v.ready !== true || typeof v.id !== 'string') return undefined;
  if (typeof v.amqpPort !== 'number' || typeof v.clusterPort !== 'number' || typeof v.pid !== 'number') {
    return undefined;
  }
  const ready: MemberReadyLine = {
    ready: true,
    id: v.id,
    amqpPort: v.amqpPort,
    clusterPort: v.clusterPort,
    pid: v.pid,
  };
  if (typeof v.httpPort === 'number') ready.httpPort = v.httpPort;
  if (typeof v.wsPort === 'number') ready.wsPort = v.wsPort;
  if (v.wsTls === true) ready.wsTls = true;
  return ready;
}

/**
 * One running incarnation of a member: the OS process, its ready line and its exit.
 *
 * stdin is a pipe the member watches: the member exits when it closes, which happens when the
 * supervisor closes it or when the supervisor process dies in any way (even SIGKILL), so members
 * never outlive their supervisor. The process gets its own process group (`detached`), so a
 * Ctrl-C at the terminal reaches only the supervisor, which then stops members in order.
 */
export class MemberProcess {
  readonly pid: number;
  /** Resolves with the ready line; rejects if the process exits (or fails to spawn) first. */
  readonly ready: Promise<MemberReadyLine>;
  /** Resolves once the process has exited (never rejects). */
  readonly exited: Promise<MemberProcessExit>;
  private readonly child: ChildProcess;
  private hasExited = false;

  /** `hostMembers`: how many members the supervisor runs on this host (their V8 flags follow it). */
  constructor(
    id: string,
    command: MemberCommand,
    hostMembers: number,
    logger: SupervisorLogger | undefined,
    onOutput?: MemberOutputHandler,
  ) {
    // the members' V8 flags are added here, the one spawn every member goes through
    const launch = withMemberV8Flags(command, hostMembers);
    this.child = spawn(launch.command, [...launch.args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: command.env ?? process.env,
      cwd: command.cwd,
    });
    this.pid = this.child.pid ?? -1;
    const child = this.child;
    child.stdin?.on('error', () => {});

    let resolveReady!: (line: MemberReadyLine) => void;
    let rejectReady!: (err: Error) => void;
    this.ready = new Promise((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    // Nobody may be waiting on `ready` when a member dies early: don't let that be unhandled.
    this.ready.catch(() => {});
    let isReady = false;
    let stderrTail: string[] = [];

    if (child.stdout) {
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (!isReady) {
          const ready = parseReadyLine(line);
          if (ready) {
            isReady = true;
            resolveReady(ready);
            return;
          }
        }
        if (onOutput) onOutput(id, 'stdout', line);
        else logger?.debug?.({ member: id, pid: this.pid, line }, 'member stdout');
      });
    }
    if (child.stderr) {
      createInterface({ input: child.stderr }).on('line', (line) => {
        stderrTail = [...stderrTail.slice(-19), line];
        if (onOutput) onOutput(id, 'stderr', line);
        else logger?.info?.({ member: id, pid: this.pid, line }, 'member stderr');
      });
    }

    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        logger?.error?.({ member: id, err }, 'member process error');
        // A spawn failure (ENOENT, EACCES) emits 'error' without 'exit'.
        if (child.pid === undefined) {
          this.hasExited = true;
          rejectReady(
            new SupervisorError('amqp:internal-error', `member ${id}: cannot spawn ${command.command}`, {
              cause: err,
            }),
          );
          resolve({ code: null, signal: null, spawnError: err });
        }
      });
      child.once('exit', (code, signal) => {
        this.hasExited = true;
        child.stdin?.destroy();
        if (!isReady) {
          rejectReady(
            new SupervisorError(
              'amqp:internal-error',
              `member ${id} (pid ${this.pid}) exited before it was ready (code ${code}, signal ${signal})`,
              { info: { stderr: stderrTail.join('\n') } },
            ),
          );
        }
        resolve({ code, signal });
      });
    });
  }

  get alive(): boolean {
    return !this.hasExited && this.pid > 0;
  }

  /** Sends a signal to the process itself (by PID). Returns false if it is already gone. */
  signal(sig: NodeJS.Signals): boolean {
    if (!this.alive) return false;
    try {
      process.kill(this.pid, sig);
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the member's stdin: the member's cue that its supervisor is gone. */
  closeStdin(): void {
    this.child.stdin?.end();
  }
}
