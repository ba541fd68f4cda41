import { EventEmitter } from 'eventemitter3';
import { SupervisorError } from './errors.js';
import { type MemberOutputHandler, MemberProcess } from './member-process.js';
import {
  createMemberRecord,
  type MemberRecord,
  setMemberState,
  waitForMemberReady,
} from './member-record.js';
import { waitForProcessState } from './process-state.js';
import { giveUpReason } from './restart-limit.js';
import type { SupervisorOptions } from './supervisor-options.js';
import {
  DEFAULT_RESTART_POLICY,
  type MemberInfo,
  type MemberReadyLine,
  type MemberState,
  memberHttpUrl,
  memberUrl,
  memberWsUrl,
  type RestartPolicy,
  type SupervisorEvents,
  type SupervisorLogger,
  type SupervisorMemberSpec,
} from './types.js';

export type { SupervisorMemberSpec };

/**
 * Runs one OS process per cluster member and keeps them running: parses each member's ready
 * line, restarts crashed members with backoff, and injects process faults by PID (SIGKILL,
 * SIGSTOP/SIGCONT). Generic over the command that starts a member.
 */
export class Supervisor extends EventEmitter<SupervisorEvents> {
  private readonly records = new Map<string, MemberRecord>();
  private readonly policy: RestartPolicy;
  private readonly autoRestart: boolean;
  private readonly readyTimeoutMs: number;
  private readonly stopTimeoutMs: number;
  private readonly logger: SupervisorLogger | undefined;
  private readonly onMemberOutput: MemberOutputHandler | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: SupervisorOptions) {
    super();
    this.policy = { ...DEFAULT_RESTART_POLICY, ...options.restartPolicy };
    this.autoRestart = options.autoRestart ?? true;
    this.readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.logger = options.logger;
    this.onMemberOutput = options.onMemberOutput;
    for (const spec of options.members) {
      if (this.records.has(spec.id)) {
        throw new SupervisorError('amqp:invalid-field', `duplicate member id ${spec.id}`);
      }
      this.records.set(spec.id, createMemberRecord(spec, this.policy));
    }
  }

  /** Starts every member at once (none waits for another); resolves when all are ready. */
  async start(timeoutMs = this.readyTimeoutMs): Promise<void> {
    for (const record of this.records.values()) {
      if (!record.started) this.spawn(record);
    }
    await this.waitReady(undefined, timeoutMs);
  }

  /** Snapshot of every member, in configuration order. */
  members(): MemberInfo[] {
    return [...this.records.values()].map((r) => this.info(r));
  }

  member(id: string): MemberInfo {
    return this.info(this.record(id));
  }

  /**
   * Waits until the member (or every member) is ready. Rejects if it is, or becomes, dead
   * (held down) or the deadline passes. A member restarting after a crash is waited for.
   */
  async waitReady(id?: string, timeoutMs = this.readyTimeoutMs): Promise<void> {
    const targets = id === undefined ? [...this.records.values()] : [this.record(id)];
    await Promise.all(targets.map((r) => waitForMemberReady(r, timeoutMs)));
  }

  /**
   * SIGKILLs the member's process by PID and resolves once it has exited. By default the member
   * stays down until `restart(id)`; with `{ restart: true }` the supervisor treats it as a crash
   * and restarts it per its backoff policy.
   */
  async kill(id: string, options: { restart?: boolean } = {}): Promise<void> {
    const record = this.record(id);
    this.assertNotStopped();
    const proc = record.process;
    if (proc === undefined) {
      // Already down: with { restart: true } a pending automatic restart stays scheduled.
      if (!options.restart) {
        this.clearRestartTimer(record);
        this.setState(record, 'dead');
      }
      return;
    }
    record.plannedExit = options.restart ? 'crash' : 'hold';
    proc.signal('SIGKILL');
    await proc.exited;
  }

  /**
   * Starts the member again and resolves when it is ready. A member still running is stopped
   * first (SIGTERM, SIGKILL after the stop deadline); a pending backoff is skipped.
   */
  async restart(id: string, timeoutMs = this.readyTimeoutMs): Promise<MemberInfo> {
    const record = this.record(id);
    this.assertNotStopped();
    this.clearRestartTimer(record);
    if (record.process !== undefined) {
      record.plannedExit = 'respawn';
      this.setState(record, 'restarting');
      await this.terminate(record.process);
    }
    this.assertNotStopped();
    record.limit.reset();
    this.emit('member-restart', {
      id,
      reason: 'manual',
      delayMs: 0,
      consecutiveCrashes: record.backoff.consecutiveCrashes,
    });
    this.spawn(record);
    await waitForMemberReady(record, timeoutMs);
    return this.info(record);
  }

  /**
   * SIGSTOPs the member: it keeps its sockets but answers nothing until `resume(id)`. Resolves
   * once the OS reports the process stopped (on Linux, via /proc).
   */
  async pause(id: string): Promise<void> {
    const record = this.record(id);
    const proc = record.process;
    if (proc === undefined || !proc.alive) {
      throw new SupervisorError('amqp:illegal-state', `cannot pause member ${id}: it is ${record.state}`);
    }
    if (record.state === 'paused') return;
    proc.signal('SIGSTOP');
    this.setState(record, 'paused');
    await waitForProcessState(proc.pid, 'stopped');
  }

  /** SIGCONTs a paused member; resolves once the OS reports it running again. */
  async resume(id: string): Promise<void> {
    const record = this.record(id);
    const proc = record.process;
    if (record.state !== 'paused' || proc === undefined) return;
    proc.signal('SIGCONT');
    this.setState(record, record.readyLine === undefined ? 'starting' : 'running');
    await waitForProcessState(proc.pid, 'running');
  }

  /**
   * Stops every member: paused ones are resumed first (a stopped process cannot handle SIGTERM),
   * then SIGTERM, then SIGKILL for any still alive after the stop deadline. Resolves once every
   * process has exited. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private async stopAll(): Promise<void> {
    const procs: MemberProcess[] = [];
    for (const record of this.records.values()) {
      this.clearRestartTimer(record);
      if (record.process !== undefined) {
        record.plannedExit = 'hold';
        procs.push(record.process);
      }
    }
    await Promise.all(procs.map((p) => this.terminate(p)));
    for (const record of this.records.values()) this.setState(record, 'dead');
  }

  private async terminate(proc: MemberProcess): Promise<void> {
    proc.signal('SIGCONT');
    proc.signal('SIGTERM');
    const timer = setTimeout(() => {
      this.logger?.warn?.({ pid: proc.pid }, 'member ignored SIGTERM; sending SIGKILL');
      proc.signal('SIGKILL');
    }, this.stopTimeoutMs);
    await proc.exited;
    clearTimeout(timer);
    proc.closeStdin();
  }

  private spawn(record: MemberRecord): void {
    const id = record.spec.id;
    if (record.started) record.restarts++;
    record.started = true;
    record.readyLine = undefined;
    record.plannedExit = undefined;
    record.readyTimedOut = false;
    const output = this.onMemberOutput;
    const logger = this.logger;
    const onOutput = (member: string, stream: 'stdout' | 'stderr', line: string): void => {
      if (stream === 'stderr') record.lastOutput = line;
      if (output) output(member, stream, line);
      else if (stream === 'stdout') logger?.debug?.({ member, line }, 'member stdout');
      else logger?.info?.({ member, line }, 'member stderr');
    };
    let proc: MemberProcess;
    try {
      proc = new MemberProcess(id, record.spec.command(), this.records.size, this.logger, onOutput);
    } catch (err) {
      this.logger?.error?.({ member: id, err }, 'cannot compute or spawn member command');
      record.process = undefined;
      this.setState(record, 'dead');
      return;
    }
    record.process = proc;
    this.setState(record, 'starting');
    this.logger?.info?.({ member: id, pid: proc.pid }, 'member spawned');
    record.readyTimer = setTimeout(() => this.onReadyTimeout(record, proc), this.readyTimeoutMs);
    proc.ready.then(
      (line) => this.onReady(record, proc, line),
      () => {},
    );
    void proc.exited.then((exit) => this.onExit(record, proc, exit.code, exit.signal, exit.spawnError));
  }

  private onReady(record: MemberRecord, proc: MemberProcess, line: MemberReadyLine): void {
    if (record.process !== proc) return;
    this.clearReadyTimer(record);
    if (line.id !== record.spec.id || line.pid !== proc.pid) {
      this.logger?.warn?.(
        { member: record.spec.id, pid: proc.pid, ready: line },
        'ready line names another member or pid',
      );
    }
    record.readyLine = line;
    record.wsTls = line.wsTls === true;
    record.readyAt = Date.now();
    if (record.state !== 'paused') this.setState(record, 'running');
    this.logger?.info?.({ member: record.spec.id, pid: proc.pid, ready: line }, 'member ready');
    this.emit('member-ready', this.info(record));
  }

  private onReadyTimeout(record: MemberRecord, proc: MemberProcess): void {
    record.readyTimer = undefined;
    if (record.process !== proc || record.readyLine !== undefined) return;
    if (record.state === 'paused') {
      record.readyTimer = setTimeout(() => this.onReadyTimeout(record, proc), this.readyTimeoutMs);
      return;
    }
    this.logger?.error?.({ member: record.spec.id, pid: proc.pid }, 'member not ready in time; killing it');
    record.readyTimedOut = true;
    proc.signal('SIGKILL');
  }

  private onExit(
    record: MemberRecord,
    proc: MemberProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
    spawnError: Error | undefined,
  ): void {
    if (record.process !== proc) return;
    this.clearReadyTimer(record);
    const id = record.spec.id;
    const planned = record.plannedExit;
    record.process = undefined;
    record.plannedExit = undefined;
    const upFor = record.readyLine === undefined ? 0 : Date.now() - record.readyAt;
    record.readyLine = undefined;
    record.lastExit =
      spawnError === undefined
        ? `pid ${proc.pid} exited with code ${code}, signal ${signal}`
        : `cannot spawn it: ${spawnError.message}`;
    const crashed = planned === undefined || planned === 'crash';
    const giveUp =
      planned === undefined
        ? giveUpReason({
            id,
            code,
            signal,
            readyTimedOut: record.readyTimedOut,
            limit: record.limit,
            policy: this.policy,
            now: Date.now(),
          })
        : undefined;
    const willRestart =
      this.stopping === undefined &&
      giveUp === undefined &&
      (planned === 'crash' || (planned === undefined && this.autoRestart));
    const failedForGood = giveUp !== undefined && this.stopping === undefined && this.autoRestart;
    if (failedForGood) {
      // before the state changes: whoever waits for this member reads why it is dead
      record.lastExit = `${giveUp}; last exit: ${record.lastExit}${
        record.lastOutput === undefined ? '' : `; its last words: ${record.lastOutput}`
      }`;
    }
    const log = crashed ? this.logger?.warn : this.logger?.info;
    log?.call(this.logger, { member: id, pid: proc.pid, code, signal, willRestart }, 'member exited');
    // State first (so exit listeners see it), then the exit event, then the restart it causes.
    this.setState(record, planned === 'respawn' || willRestart ? 'restarting' : 'dead');
    this.emit('member-exit', {
      id,
      pid: proc.pid,
      code,
      signal,
      expected: planned !== undefined,
      willRestart,
    });
    if (failedForGood) {
      this.logger?.error?.({ member: id, reason: record.lastExit }, 'member failed: not restarting it');
      this.emit('member-failed', {
        id,
        reason: record.lastExit ?? '',
        failures: record.limit.count,
        lastOutput: record.lastOutput,
      });
    }
    // A listener may have killed, restarted or stopped it meanwhile.
    const stillDue =
      record.state === 'restarting' && record.process === undefined && this.stopping === undefined;
    if (willRestart && stillDue && record.restartTimer === undefined) this.scheduleRestart(record, upFor);
  }

  private scheduleRestart(record: MemberRecord, upForMs: number): void {
    const delayMs = record.backoff.nextDelay(upForMs);
    this.setState(record, 'restarting');
    this.emit('member-restart', {
      id: record.spec.id,
      reason: 'crash',
      delayMs,
      consecutiveCrashes: record.backoff.consecutiveCrashes,
    });
    record.restartTimer = setTimeout(() => {
      record.restartTimer = undefined;
      if (this.stopping === undefined) this.spawn(record);
    }, delayMs);
  }

  private setState(record: MemberRecord, state: MemberState): void {
    setMemberState(record, state);
  }

  private info(record: MemberRecord): MemberInfo {
    const amqpPort = record.readyLine?.amqpPort ?? record.spec.amqpPort ?? 0;
    const httpPort = record.readyLine?.httpPort ?? record.spec.httpPort;
    const wsPort = record.readyLine?.wsPort ?? record.spec.wsPort;
    return {
      id: record.spec.id,
      pid: record.process?.pid ?? null,
      amqpPort,
      clusterPort: record.readyLine?.clusterPort ?? record.spec.clusterPort ?? 0,
      url: memberUrl(amqpPort),
      httpUrl: httpPort === undefined ? null : memberHttpUrl(httpPort),
      wsUrl: wsPort === undefined ? null : memberWsUrl(wsPort, record.wsTls),
      state: record.state,
      restarts: record.restarts,
    };
  }

  private record(id: string): MemberRecord {
    const record = this.records.get(id);
    if (record === undefined) throw new SupervisorError('amqp:not-found', `no member ${id}`);
    return record;
  }

  private assertNotStopped(): void {
    if (this.stopping !== undefined) throw new SupervisorError('amqp:illegal-state', 'supervisor stopped');
  }

  private clearRestartTimer(record: MemberRecord): void {
    if (record.restartTimer !== undefined) clearTimeout(record.restartTimer);
    record.restartTimer = undefined;
  }

  private clearReadyTimer(record: MemberRecord): void {
    if (record.readyTimer !== undefined) clearTimeout(record.readyTimer);
    record.readyTimer = undefined;
  }
}
