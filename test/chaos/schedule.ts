/**
 * Nemesis schedules: what fault to inject, for how long, and the quiet gap after it. A schedule is
 * plain data, generated from a seed (randomized soak) or written out by hand (CI), so any run can
 * be replayed from its seed or its printed schedule.
 */
import { type Random, randomIndex, seededRandom, shuffled } from '../../src/common/random.js';

/** Fault families as `--faults` names them (`slow` covers slow and lossy links). */
export const FAULT_KINDS = ['kill', 'pause', 'partition', 'restart-all', 'slow', 'lossy', 'corrupt'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Who a process fault hits: listed member ids, or the member the first producer uses. */
export type Victims = string[] | 'client';

export type Fault =
  | { kind: 'kill'; victims: Victims }
  | { kind: 'pause'; victims: Victims }
  /** every link between groups is cut; members in no group form one more group */
  | { kind: 'partition'; groups: string[][]; label: string }
  | { kind: 'ring' }
  | { kind: 'restart-all' }
  | { kind: 'slow'; ms: number }
  | { kind: 'lossy'; p: number }
  /**
   * SIGKILL one member, flip one byte of its store (`file` of its Raft dir, at `at` x its size),
   * restart it: it must quarantine the damage and catch up without voting (issue 10).
   */
  | { kind: 'corrupt'; victims: Victims; file: StoreFile; at: number };

/** The files of a member's Raft store the `corrupt` fault may damage. */
export const STORE_FILES = ['log', 'meta.json', 'snapshot'] as const;
export type StoreFile = (typeof STORE_FILES)[number];

export interface NemesisStep {
  fault: Fault;
  /** how long the fault stays on, ms (restart-all: how long every member stays down) */
  holdMs: number;
  /** quiet time after the fault is healed (and the cluster serves again), ms */
  gapMs: number;
}

export function parseFaults(list: string): FaultKind[] {
  const out: FaultKind[] = [];
  for (const raw of list.split(',').map((s) => s.trim())) {
    if (raw === '') continue;
    if (!(FAULT_KINDS as readonly string[]).includes(raw)) {
      throw new Error(`unknown fault '${raw}' (known: ${FAULT_KINDS.join(', ')})`);
    }
    if (!out.includes(raw as FaultKind)) out.push(raw as FaultKind);
  }
  return out;
}

function between(random: Random, lo: number, hi: number): number {
  return Math.round(lo + random() * (hi - lo));
}

function pickMembers(random: Random, ids: readonly string[], max: number): string[] {
  const n = 1 + randomIndex(random, Math.max(1, max));
  return shuffled(ids, random).slice(0, n).sort();
}

/** One randomized fault of `kind` over members `ids` (never more than a minority down at once). */
export function randomFault(kind: FaultKind, ids: readonly string[], random: Random): Fault {
  const minority = Math.max(1, Math.floor((ids.length - 1) / 2));
  switch (kind) {
    case 'kill':
    case 'pause':
      return random() < 0.5
        ? { kind, victims: 'client' }
        : { kind, victims: pickMembers(random, ids, minority) };
    case 'partition': {
      const shape = randomIndex(random, ids.length >= 5 ? 3 : 2);
      if (shape === 2) return { kind: 'ring' };
      const order = shuffled(ids, random);
      if (shape === 0) {
        const one = order[0]!;
        return { kind: 'partition', groups: [[one]], label: `isolate ${one}` };
      }
      const small = order.slice(0, minority).sort();
      const big = order.slice(minority).sort();
      return { kind: 'partition', groups: [small, big], label: `minority ${small.join(',')}` };
    }
    case 'restart-all':
      return { kind: 'restart-all' };
    case 'slow':
      return random() < 0.6 ? { kind: 'slow', ms: between(random, 20, 150) } : { kind: 'lossy', p: 0.002 };
    case 'lossy':
      return { kind: 'lossy', p: Math.round((0.001 + random() * 0.009) * 10_000) / 10_000 };
    case 'corrupt': {
      // the log most often: it holds the entries a member acknowledged
      const file = random() < 0.7 ? 'log' : random() < 0.7 ? 'meta.json' : 'snapshot';
      const at = Math.round(random() * 1000) / 1000;
      return { kind, victims: random() < 0.5 ? 'client' : pickMembers(random, ids, 1), file, at };
    }
  }
}

export interface RandomScheduleOptions {
  seed: number;
  faults: readonly FaultKind[];
  ids: readonly string[];
  /** total time faults may take, ms (steps are added while they fit) */
  durationMs: number;
}

/** A seeded schedule: faults drawn uniformly from `faults`, held 2-10 s, gaps of 2-5 s. */
export function randomSchedule(opts: RandomScheduleOptions): NemesisStep[] {
  const random = seededRandom(opts.seed);
  const steps: NemesisStep[] = [];
  if (opts.faults.length === 0) return steps;
  let t = 0;
  for (;;) {
    const kind = opts.faults[randomIndex(random, opts.faults.length)]!;
    const fault = randomFault(kind, opts.ids, random);
    const holdMs =
      fault.kind === 'restart-all'
        ? between(random, 500, 3_000)
        : fault.kind === 'partition' || fault.kind === 'ring'
          ? between(random, 3_000, 12_000)
          : between(random, 2_000, 8_000);
    const gapMs = between(random, 2_000, 5_000);
    // restarts and catch-up take time of their own: budget a few seconds per step
    const cost = holdMs + gapMs + (fault.kind === 'restart-all' ? 10_000 : 3_000);
    if (t + cost > opts.durationMs) break;
    steps.push({ fault, holdMs, gapMs });
    t += cost;
  }
  return steps;
}

export function describeFault(f: Fault): string {
  switch (f.kind) {
    case 'kill':
    case 'pause':
      return `${f.kind} ${f.victims === 'client' ? '<member in use>' : f.victims.join(',')}`;
    case 'partition':
      return `partition ${f.label}`;
    case 'ring':
      return 'partition ring';
    case 'restart-all':
      return 'restart-all';
    case 'slow':
      return `slow ${f.ms} ms`;
    case 'lossy':
      return `lossy p=${f.p}`;
    case 'corrupt':
      return `corrupt ${f.file} at ${f.at} of ${f.victims === 'client' ? '<member in use>' : f.victims.join(',')}`;
  }
}
