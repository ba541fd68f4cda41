/**
 * The e2e bench's figures (bench/e2e.ts): a target's row of per-round rates and CPU per message,
 * how a run's per-process CPU is added to it, the rate and ratio formats of its tables, the
 * per-process CPU tables, and the cluster's follower / leader CPU ratio.
 */
import type { PhaseTimes } from './clients.js';
import type { TargetName } from './e2e-targets.js';
import { cpuPerMessageUs } from './process-cpu.js';

export interface E2eRow {
  target: TargetName;
  broker: string;
  /** msg/s per round */
  rheaSend: number[];
  quorateSend: number[];
  rheaReceive: number[];
  /** with the receive path chosen (both: batch) */
  quorateReceive: number[];
  /** `--receive both`: the iterator path's receive, same rounds */
  quorateIteratorReceive: number[];
  /** this process's CPU per message (user + system, microseconds), per round and phase */
  cpu: {
    rheaSend: number[];
    quorateSend: number[];
    rheaReceive: number[];
    quorateReceive: number[];
    quorateIteratorReceive: number[];
  };
  /**
   * CPU per message (microseconds, from the OS) of every process, per phase, per round, by the
   * process's label: `client` (this process) and the broker's (`broker`, or a cluster's members
   * by role: `leader n1`, `follower n2`...).
   */
  processCpu: Record<CpuPhase, Record<string, number[]>>;
  error?: string;
}

type CpuPhase = keyof E2eRow['cpu'];
const PHASES: Record<CpuPhase, string> = {
  rheaSend: 'rhea send',
  quorateSend: 'quorate send',
  rheaReceive: 'rhea receive',
  quorateReceive: 'quorate receive',
  quorateIteratorReceive: 'quorate receive (for await)',
};

/** Adds one run's per-process CPU per message to the row's send and receive phases. */
export function addProcessCpu(
  row: E2eRow,
  t: PhaseTimes,
  n: number,
  send: CpuPhase | undefined,
  receive: CpuPhase,
) {
  if (t.snapshots === undefined) return;
  const [s0, s1, s2] = t.snapshots;
  const add = (phase: CpuPhase, us: Map<string, number | null>) => {
    for (const [label, v] of us) {
      if (v === null) continue;
      const byLabel = row.processCpu[phase];
      byLabel[label] ??= [];
      byLabel[label].push(v);
    }
  };
  if (send !== undefined) add(send, cpuPerMessageUs(s0, s1, n));
  add(receive, cpuPerMessageUs(s1, s2, n));
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor((s.length - 1) / 2)]!;
};
export const fmt = (xs: number[]) => {
  if (xs.length === 0) return '-';
  const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo === hi ? k(lo) : `${k(lo)}-${k(hi)}`;
};
export const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);

/** One table per broker: each phase's CPU per message in each process, medians over the rounds. */
export function logProcessCpu(rows: E2eRow[], log: (line: string) => void): void {
  for (const row of rows) {
    if (row.error !== undefined) continue;
    const labels = [
      ...new Set(Object.values(row.processCpu).flatMap((byLabel) => Object.keys(byLabel))),
    ].sort((a, b) => processOrder(a) - processOrder(b) || a.localeCompare(b));
    if (labels.length === 0) continue;
    log('');
    const roles =
      row.target === 'cluster' ? '; the leader serves the client, the followers only replicate' : '';
    log(
      `CPU per message by process, ${row.broker} (from the OS, user + system, microseconds; medians${roles})`,
    );
    log(`| phase | ${labels.join(' | ')} | all processes |`);
    log(`|---|${labels.map(() => '---|').join('')}---|`);
    for (const phase of Object.keys(PHASES) as CpuPhase[]) {
      const byLabel = row.processCpu[phase];
      if (Object.keys(byLabel).length === 0) continue;
      const cells = labels.map((l) => (byLabel[l] === undefined ? undefined : median(byLabel[l])));
      const total = cells.every((c) => c !== undefined)
        ? (cells as number[]).reduce((a, b) => a + b, 0).toFixed(1)
        : '-';
      log(
        `| ${PHASES[phase]} | ${cells.map((c) => (c === undefined ? '-' : c.toFixed(1))).join(' | ')} | ${total} |`,
      );
    }
  }
}

/**
 * One phase of a cluster: the costlier follower's median CPU per message over the leader's (every
 * round the leader's, whichever member led), rounded to 0.01; 0 without both.
 */
export function followerOverLeaderCpu(byLabel: Record<string, number[]>): number {
  const labels = Object.keys(byLabel);
  const leader = median(labels.filter((l) => l.startsWith('leader')).flatMap((l) => byLabel[l]!));
  const followers = labels.filter((l) => l.startsWith('follower')).map((l) => median(byLabel[l]!));
  return followers.length === 0 ? 0 : ratio(Math.max(...followers), leader);
}

/** client first, then a cluster's leader, then the rest by name. */
const processOrder = (label: string) => (label === 'client' ? 0 : label.startsWith('leader') ? 1 : 2);
