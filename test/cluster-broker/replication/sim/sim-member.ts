/**
 * One simulated cluster member: the real `Replica` (src/cluster-broker/replication/replica.ts)
 * with its real FileStorage, started on the simulation's clock, timer and network (the seams of
 * replica-seams.ts) and on a simulated disk (slow-sync-fs.ts over a power-loss model). A crash
 * freezes the running Replica where it is (its pending syncs never complete, its sends are
 * dropped) and keeps only what the disk made durable; the next start recovers from that through
 * FileStorage's own recovery, torn tails and quarantined damage included.
 *
 * The state machine is a hash chain over the applied entries; its snapshot is (index, hash), so
 * the checker can compare states across members and snapshots.
 */
import { parseLog } from '../../../../src/cluster-broker/replication/log-records.js';
import type {
  Entry,
  Message,
  Snapshot,
  UnsafeFlags,
} from '../../../../src/cluster-broker/replication/raft/types.js';
import { snapshotBytes } from '../../../../src/cluster-broker/replication/raft/types.js';
import { Replica, type StateMachine } from '../../../../src/cluster-broker/replication/replica.js';
import type {
  ReplicaTransport,
  TimerFactory,
  UnsafeDriverFlags,
} from '../../../../src/cluster-broker/replication/replica-seams.js';
import { StoreImage } from '../../../../src/cluster-broker/replication/store-image.js';
import { PowerLossFs } from '../../../support/power-loss-fs.js';
import { type Checker, chain, type LogView, SafetyViolation } from './checker.js';
import type { Rng } from './rng.js';
import { SlowSyncFs } from './slow-sync-fs.js';

/** What the simulation gives its members. */
export interface SimHost {
  readonly rng: Rng;
  readonly checker: Checker;
  readonly ids: readonly string[];
  now(): number;
  /** Puts a message on the simulated network. */
  send(m: Message): void;
  /** Runs `fire` `ms` simulated ms from now, unless the member crashed by then. */
  later(member: SimMember, ms: number, fire: () => void): void;
  /** Resolves when a sync the member starts now completes (never, if it crashes first). */
  syncDone(member: SimMember): Promise<void>;
  /** A check failed inside the Replica's callbacks: the run fails once this step settles. */
  fail(err: unknown): void;
  /** The member applied `e` (the liveness probe counts these). */
  applied(member: SimMember, e: Entry): void;
  /** The member became leader. */
  elected(member: SimMember): void;
  trace(line: string | (() => string)): void;
}

export interface MemberConfig {
  readonly maxBytesPerAppend: number;
  /** Compact after this many applied entries. */
  readonly snapshotEvery: number;
  readonly unsafe?: UnsafeFlags;
  readonly unsafeDriver?: UnsafeDriverFlags;
}

function encodeState(index: number, hash: number): Uint8Array {
  const b = new Uint8Array(8);
  const v = new DataView(b.buffer);
  v.setUint32(0, index);
  v.setUint32(4, hash);
  return b;
}

function decodeState(b: Uint8Array): { index: number; hash: number } {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { index: v.getUint32(0), hash: v.getUint32(4) };
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

const STORE_FILES = ['meta.json', 'log', 'snapshot'] as const;

/**
 * What a stopped member's store loses: a flipped byte (in its vote record, log or snapshot), one
 * whole file, or every file (an emptied data dir, which looks exactly like a new member's).
 */
export const STORE_LOSSES = ['flip', 'lose-meta', 'lose-log', 'lose-snapshot', 'wipe'] as const;
export type StoreLoss = (typeof STORE_LOSSES)[number];

const LOST_FILE = { 'lose-meta': 'meta.json', 'lose-log': 'log', 'lose-snapshot': 'snapshot' } as const;

export class SimMember {
  up = false;
  /** Incremented by every start and crash: work of an earlier incarnation is dropped. */
  epoch = 0;
  /** Set once the current incarnation has started (recovered its store). */
  replica: Replica | undefined;
  /** A stalled member (SIGSTOP, overloaded host) handles no event before this time. */
  stalledUntil = 0;
  private disk = new PowerLossFs();
  /** The log as this incarnation wrote it to its store: what the checks read. */
  private written = new StoreImage();
  private deliverTo: ((m: Message) => void) | undefined;
  private peerLostTo: ((peer: string) => void) | undefined;
  /** The store lost something (StoreLoss) and no start has recovered from it yet. */
  private flipped = false;
  constructor(
    readonly id: string,
    readonly index: number,
    private readonly host: SimHost,
    private readonly config: MemberConfig,
  ) {}

  private get dir(): string {
    return `/sim/${this.id}`;
  }

  /** Start a new incarnation on what the disk holds; it joins once FileStorage has recovered. */
  start(): void {
    this.up = true;
    this.epoch++;
    this.replica = undefined;
    this.deliverTo = undefined;
    this.peerLostTo = undefined;
    const epoch = this.epoch;
    const current = () => this.up && this.epoch === epoch;
    const host = this.host;
    const fs = new SlowSyncFs(
      this.disk,
      () => host.syncDone(this),
      (path, data) => {
        if (current()) this.guard(() => this.onWrite(path, data));
      },
    );
    const transport = (
      onMessage: (m: Message) => void,
      onPeerLost: (peer: string) => void,
    ): ReplicaTransport => {
      if (current()) {
        this.deliverTo = onMessage;
        this.peerLostTo = onPeerLost;
      }
      return {
        start: async () => 0,
        send: (m) => {
          if (current()) host.send(m);
        },
        close: async () => {},
      };
    };
    // each arm() queues one event on the simulated clock; one armed since, or a stop, voids it
    const timer: TimerFactory = (fire) => {
      let armed = 0;
      let on = true;
      return {
        arm: (ms) => {
          const mine = ++armed;
          host.later(this, ms, () => {
            if (on && mine === armed) fire();
          });
        },
        stop: () => {
          on = false;
        },
      };
    };
    const { unsafe, unsafeDriver } = this.config;
    Replica.start(
      {
        id: this.id,
        clusterId: 'sim',
        members: Object.fromEntries(host.ids.map((id) => [id, { host: '127.0.0.1', port: 0 }])),
        dataDir: this.dir,
        stateMachine: this.stateMachine(),
        raft: {
          random: () => host.rng.next(),
          maxBytesPerAppend: this.config.maxBytesPerAppend,
          maxInflight: 8,
          ...(unsafe ? { unsafe } : {}),
        },
        fs,
        clock: () => host.now(),
        snapshotEvery: this.config.snapshotEvery,
      },
      { transport, timer, ...(unsafeDriver ? { unsafe: unsafeDriver } : {}) },
    ).then(
      async (replica) => {
        if (!current()) return;
        await this.readWritten();
        if (!current()) return;
        this.replica = replica;
        this.flipped = false; // recovery has made its 'damaged' mark durable
        this.listen(replica, current);
        host.trace(
          () =>
            `start ${this.id} term=${replica.term}${replica.recovering ? ` recovering=${replica.recovering}` : ''}${
              replica.storeDamage ? ` (damaged ${replica.storeDamage.file})` : ''
            } snap=${this.written.base.index} last=${replica.lastIndex}`,
        );
      },
      (err: unknown) => {
        if (current()) host.fail(err);
      },
    );
  }

  /**
   * Power loss: the running Replica stops where it is; the disk keeps what was synced, and with
   * `torn` also the unsynced appends of a file but the last, and part of that one.
   */
  crash(torn: boolean): void {
    this.up = false;
    this.stalledUntil = 0;
    this.epoch++;
    this.replica = undefined;
    this.deliverTo = undefined;
    this.peerLostTo = undefined;
    const rng = this.host.rng;
    this.disk = this.disk.survivor(torn ? (bytes) => rng.int(0, bytes) : undefined);
  }

  deliver(m: Message): void {
    if (this.replica) this.deliverTo?.(m);
  }

  /** The connection from `peer` closed (it crashed), as the TCP transport reports it. */
  peerLost(peer: string): void {
    if (this.replica) this.peerLostTo?.(peer);
  }

  /**
   * Is the member recovering, or would it be after a crash (its durable vote record says so, or
   * its store is damaged and no start has found that yet)?
   */
  async recovering(): Promise<boolean> {
    if (this.flipped || (this.up && this.replica?.recovering)) return true;
    let meta: Uint8Array;
    try {
      meta = await this.disk.survivor().readFile(`${this.dir}/meta.json`);
    } catch {
      return true; // no vote record yet: a blank store
    }
    try {
      return (
        (JSON.parse(asBuffer(meta).toString('utf8')) as { recovering?: string }).recovering !== undefined
      );
    } catch {
      return true;
    }
  }

  /**
   * Damage a stopped member's store as a bad disk or an operator does: flip a byte (of its vote
   * record, log or snapshot), remove one file (when it has it; else flip), or empty the data dir.
   * Returns what was lost, or undefined when the store holds nothing yet. The byte to flip is
   * drawn whatever the loss, so the seeded schedule is the same for every loss.
   */
  async corrupt(loss: StoreLoss = 'flip'): Promise<string | undefined> {
    const rng = this.host.rng;
    const files: { name: string; size: number }[] = [];
    for (const name of STORE_FILES) {
      const size = await this.disk.readFile(`${this.dir}/${name}`).then(
        (b) => b.length,
        () => 0,
      );
      if (size > 0) files.push({ name, size });
    }
    if (files[0]?.name !== 'meta.json') return undefined;
    const f = rng.pick(files);
    const offset = rng.int(0, f.size - 1);
    const mask = rng.int(1, 255);
    this.flipped = true;
    if (loss === 'wipe') {
      for (const name of STORE_FILES) await this.disk.remove(`${this.dir}/${name}`);
      return 'data dir emptied';
    }
    if (loss !== 'flip') {
      const name = LOST_FILE[loss];
      if (files.some((x) => x.name === name)) {
        await this.disk.remove(`${this.dir}/${name}`);
        return `${name} removed`;
      }
    }
    this.disk.flipByte(`${this.dir}/${f.name}`, offset, mask);
    return `${f.name} byte ${offset}`;
  }

  private stateMachine(): StateMachine {
    let index = 0;
    let hash = 0;
    const { checker } = this.host;
    return {
      apply: (e) =>
        this.guard(() => {
          if (e.index !== index + 1)
            throw new SafetyViolation(`${this.id} applied ${e.index} after ${index}`);
          hash = chain(hash, e);
          index = e.index;
          // whoever applies an entry knows a term at least as high as the one it was committed in
          const term = this.replica?.term ?? 0;
          if (term > checker.maxTerm) checker.maxTerm = term;
          checker.onApply(this.id, e, hash);
          this.host.applied(this, e);
        }),
      restore: (s: Snapshot) =>
        this.guard(() => {
          const state = decodeState(snapshotBytes(s.data));
          checker.onRestore(this.id, state.index, state.hash);
          index = state.index;
          hash = state.hash;
          this.host.trace(() => `${this.id} restored snapshot ${state.index}`);
        }),
      snapshot: () => encodeState(index, hash),
    };
  }

  private listen(replica: Replica, current: () => boolean): void {
    const { checker } = this.host;
    replica.on('role', (s) =>
      this.guard(() => {
        if (s.term > checker.maxTerm) checker.maxTerm = s.term;
        this.host.trace(() => `${this.id} is ${s.role} t${s.term} leader=${s.leaderId}`);
        if (s.role !== 'leader') return;
        this.host.elected(this);
        checker.onLeader(this.id, s.term, this.writtenLog());
      }),
    );
    replica.on('applied', (index) => this.host.trace(() => `${this.id} applied ..${index}`));
    replica.on('error', (err) => {
      if (current()) this.host.fail(new Error(`${this.id} stopped on a storage error: ${err.message}`));
    });
  }

  /** The log records FileStorage writes: every new entry goes through the log-matching check. */
  private onWrite(path: string, data: Uint8Array): void {
    const name = path.slice(this.dir.length + 1);
    if (name !== 'log' && name !== 'log.tmp') return;
    const parsed = parseLog(asBuffer(data));
    if (parsed.damage) throw new Error(`${this.id} wrote a log chunk that is not whole records`);
    if (name === 'log.tmp') {
      // a rewrite (compaction, recovery): entries already checked when first written
      this.written = new StoreImage();
      for (const op of parsed.ops) this.written.apply(op);
      return;
    }
    for (const op of parsed.ops) {
      if (op.kind === 'entry')
        this.host.checker.onLogEntry(this.id, op.entry, this.written.termAt(op.entry.index - 1));
      this.written.apply(op);
    }
  }

  private writtenLog(): LogView {
    const written = this.written;
    return { snapshotIndex: written.base.index, term: (i) => written.termAt(i) };
  }

  /** The log as recovery left it (a torn tail cut, damage quarantined). */
  private async readWritten(): Promise<void> {
    const image = new StoreImage();
    const log = await this.disk.readFile(`${this.dir}/log`).catch(() => new Uint8Array(0));
    for (const op of parseLog(asBuffer(log)).ops) image.apply(op);
    this.written = image;
  }

  /** Run a check inside a Replica callback: a throw there would look like a storage failure. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.host.fail(err);
    }
  }
}
