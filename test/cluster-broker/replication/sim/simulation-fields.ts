/**
 * The ground floor of Simulation (simulation.ts): every field of a run, in one place so the object
 * keeps one shape, and the constructor, which draws the seed's settings in their fixed order.
 * Split from what the members see (simulation-host.ts), the faults (simulation-faults.ts) and the
 * run loop (simulation.ts) so each file has one job; a class chain, so every call stays a plain
 * method call on one object and the seeded draws keep their order.
 */
import type { Entry, Message } from '../../../../src/cluster-broker/replication/raft/types.js';
import { Checker } from './checker.js';
import { EventQueue } from './event-queue.js';
import { type Figure8Host, Figure8Schedule } from './figure8.js';
import { Rng } from './rng.js';
import { type SimHost, SimMember, STORE_LOSSES, type StoreLoss } from './sim-member.js';
import type { SimEvent, SimOptions } from './simulation-types.js';

/** The figure-8 choice draws from its own stream (seed + this), and this share of seeds plays it. */
const FIGURE8_STREAM = 0x0f18;
/** The kind of each store loss draws from its own stream too, so the schedule stays the same. */
const LOSS_STREAM = 0x1055;
const FIGURE8_SHARE = 0.2;

export abstract class SimulationFields implements SimHost {
  readonly rng: Rng;
  readonly checker = new Checker();
  readonly ids: string[];
  protected readonly q = new EventQueue<SimEvent>();
  protected readonly nodes: SimMember[];
  protected readonly traceSize: number;
  protected readonly traceBuf: string[] = [];
  protected clock = 0;
  protected steps = 0;
  protected elections = 0;
  protected proposals = 0;
  protected failure: unknown;
  /** conn[a][b]: messages from a reach b. */
  protected conn: boolean[][];
  protected loss = 0;
  protected dup = 0;
  protected delayMax = 3;
  protected healed = false;
  protected healAt = 0;
  /** Payload keys proposed after healing; liveness holds once one is applied everywhere. */
  protected probeKeys = new Set<string>();
  protected probeApplied = new Map<string, number>();
  /** Members in the healed majority (all of them unless some were left out). */
  protected majority = 0;
  protected live = false;
  protected recoveryMs: number | undefined;
  protected readonly faultMs: number;
  protected readonly livenessMs: number;
  /** Mean gap between faults (ms), and the chance a member crashes just before a sync completes. */
  protected readonly faultGap: number;
  protected readonly crashAtSync: number;
  /** Longest simulated sync (ms). */
  protected readonly syncMaxMs: number;
  /** Pass every message through the AMQP wire codec (encode + decode), as the TCP transport does. */
  protected readonly viaWire: boolean;
  /**
   * Leader churn (half the seeds): leaders are cut off at their election, within a few ms, or
   * right after a commit, and come back later; fewer random faults besides. The other seeds keep
   * the plain fault mix.
   */
  protected readonly churn: boolean;
  /**
   * A fifth of the seeds (chosen apart from the main stream, so the others run as before) play
   * Raft figure 8 (figure8.ts) instead of random faults: one entry per append, no crashes.
   */
  protected readonly figure8: Figure8Schedule | undefined;
  /** Chance that a restarting member finds its store corrupt. */
  protected readonly corruptAtRestart: number;
  protected corruptions = 0;
  protected readonly lossRng: Rng;
  protected readonly losses: readonly StoreLoss[];
  protected readonly lossesWithAnotherDown: Partial<Record<StoreLoss, number>> = {};

  constructor(protected readonly opts: SimOptions) {
    this.rng = new Rng(opts.seed);
    const n = opts.nodes ?? 3;
    this.ids = Array.from({ length: n }, (_, i) => `n${i + 1}`);
    this.conn = this.ids.map(() => this.ids.map(() => true));
    this.traceSize = opts.trace ?? 0;
    this.faultMs = opts.faultMs ?? 3000;
    this.livenessMs = opts.livenessMs ?? 5000;
    const figure8 = new Rng(opts.seed + FIGURE8_STREAM).chance(FIGURE8_SHARE);
    const churn = this.rng.chance(0.5);
    this.churn = churn && !figure8;
    // churn seeds mostly send one entry per append: a follower acknowledges entries one by one
    const appendBytes = this.rng.pick(churn ? [20, 20, 1 << 20] : [20, 40, 1 << 20]);
    const maxBytesPerAppend = figure8 ? 20 : appendBytes;
    // churn seeds: fewer random faults, so the leader changes are not drowned in them
    this.faultGap = churn ? 300 : this.rng.pick([30, 100, 300]);
    const crashAtSync = this.rng.pick([0, 0.003, 0.02]);
    this.crashAtSync = figure8 ? 0 : crashAtSync;
    this.syncMaxMs = this.rng.pick([0.5, 2]);
    this.viaWire = this.rng.chance(0.1);
    this.corruptAtRestart = opts.corruption === false ? 0 : this.rng.pick([0, 0.2, 0.5]);
    this.lossRng = new Rng(opts.seed + LOSS_STREAM);
    this.losses = opts.losses ?? STORE_LOSSES;
    this.nodes = this.ids.map(
      (id, i) =>
        new SimMember(id, i, this, {
          maxBytesPerAppend,
          snapshotEvery: this.rng.int(3, 40),
          ...(opts.unsafe ? { unsafe: opts.unsafe } : {}),
          ...(opts.unsafeDriver ? { unsafeDriver: opts.unsafeDriver } : {}),
        }),
    );
    this.figure8 = figure8 ? new Figure8Schedule(this.figure8Host()) : undefined;
  }

  protected abstract figure8Host(): Figure8Host;
  abstract now(): number;
  abstract trace(line: string | (() => string)): void;
  abstract fail(err: unknown): void;
  abstract later(member: SimMember, ms: number, fire: () => void): void;
  abstract syncDone(member: SimMember): Promise<void>;
  abstract elected(member: SimMember): void;
  abstract applied(member: SimMember, e: Entry): void;
  abstract send(m: Message): void;
}
