/**
 * CPU time per process, from the OS, for the benches' "where does the CPU go" tables: the client
 * (this process, `process.cpuUsage()`) and every broker process: the sum of its threads' time on
 * a CPU in nanoseconds (`/proc/<pid>/task/<tid>/schedstat`), plus the cutime + cstime of children
 * that exited and were waited for (`/proc/<pid>/stat`). A bench takes a snapshot before and after
 * its timed phase and divides the difference by the messages: CPU time, not wall time, so a
 * process waiting on the disk or on another costs nothing here.
 *
 * Why schedstat and not stat's utime + stime: stat counts in clock ticks (10 ms), and a broker's
 * share of a 20,000-message phase is a few of them, so one tick more or less moved a follower /
 * leader ratio by a tenth. A thread that exits between the two snapshots takes its time with it
 * (schedstat is per live thread); the brokers the benches count keep their threads for life
 * (Node's V8 and libuv pools, the Erlang schedulers, the Proton broker's one thread).
 *
 * Linux only (the benches' machine); on a system without /proc a broker reads as null, and the
 * tables print "-" for it rather than a made-up zero.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The CPU fields of one `/proc/<pid>/stat` line, in clock ticks (proc(5)). */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** Field 10: minor page faults (a page mapped without reading the disk, e.g. a first touch). */
  minflt: number;
  /** Field 14: time scheduled in user mode. */
  utime: number;
  /** Field 15: time scheduled in kernel mode. */
  stime: number;
  /** Fields 16 and 17: the same for children this process has waited for. */
  cutime: number;
  cstime: number;
}

/** A `/proc/<pid>/stat` line that is not one. */
export class ProcStatParseError extends Error {
  constructor(reason: string, line: string) {
    super(`unreadable /proc stat line (${reason}): ${JSON.stringify(line.slice(0, 120))}`);
    this.name = 'ProcStatParseError';
  }
}

/**
 * Parses one `/proc/<pid>/stat` line. The command name (field 2) is in parentheses and may itself
 * hold spaces and parentheses, so the fields are counted from the LAST ')' (proc(5)).
 */
export function parseProcStat(line: string): ProcStat {
  const open = line.indexOf(' (');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) throw new ProcStatParseError('no (comm)', line);
  const pid = Number(line.slice(0, open));
  // fields 3.. (state is field 3, at index 0 here)
  const rest = line
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  if (rest.length < 15) throw new ProcStatParseError(`${rest.length + 2} fields, expected at least 17`, line);
  const field = (n: number): number => {
    const text = rest[n - 3]!;
    if (!/^-?\d+$/.test(text)) throw new ProcStatParseError(`field ${n} is ${JSON.stringify(text)}`, line);
    return Number(text);
  };
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new ProcStatParseError('bad pid', line);
  return {
    pid,
    ppid: field(4),
    minflt: field(10),
    utime: field(14),
    stime: field(15),
    cutime: field(16),
    cstime: field(17),
  };
}

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`; 100 on every Linux the benches met). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      const v = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
      ticksPerSecond = Number.isFinite(v) && v > 0 ? v : 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU milliseconds a stat line accounts for: the process's own and its waited-for children's. */
export function statCpuMs(stat: ProcStat, ticks = clockTicksPerSecond()): number {
  return ((stat.utime + stat.stime + stat.cutime + stat.cstime) * 1000) / ticks;
}

/**
 * The time on a CPU in a `/proc/<pid>/task/<tid>/schedstat` line, in nanoseconds (its first field;
 * the kernel's scheduler statistics, docs: sched-stats), or null when the line is not one.
 */
export function schedstatCpuNs(line: string): number | null {
  const first = line.trim().split(' ', 1)[0] ?? '';
  if (!/^\d+$/.test(first)) return null;
  const ns = Number(first);
  return Number.isSafeInteger(ns) ? ns : null;
}

/**
 * The CPU ms of a process's live threads so far, summed from their schedstat lines; null when the
 * task list or every thread could not be read. A thread gone between the listing and its read is
 * left out: it has no time left to count.
 */
export function threadsCpuMs(pid: number): number | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  let ns = 0;
  let read = 0;
  for (const tid of tids) {
    let line: string;
    try {
      line = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8');
    } catch {
      continue;
    }
    const threadNs = schedstatCpuNs(line);
    if (threadNs === null) return null;
    ns += threadNs;
    read++;
  }
  return read === 0 ? null : ns / 1e6;
}

/**
 * The process's CPU ms so far from /proc: its threads' schedstat time plus its waited-for
 * children's (stat); stat's utime + stime alone where the kernel has no schedstat; null when the
 * process is gone or /proc is not there.
 */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const threads = threadsCpuMs(pid);
    if (threads === null) return statCpuMs(stat);
    return threads + ((stat.cutime + stat.cstime) * 1000) / clockTicksPerSecond();
  } catch {
    return null;
  }
}

/** This process's CPU ms so far (user + system). */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** A process whose CPU a bench counts, by the name its tables print ("client", "leader n1"...). */
export interface CountedProcess {
  label: string;
  /** undefined: this process. */
  pid?: number;
}

/** CPU ms per label at one instant (null: the process could not be read). */
export type CpuSnapshot = Map<string, number | null>;

export function cpuSnapshot(processes: readonly CountedProcess[]): CpuSnapshot {
  return new Map(
    processes.map((p) => [p.label, p.pid === undefined ? ownCpuMs() : processCpuMs(p.pid)] as const),
  );
}

/**
 * Each process's CPU ms between two snapshots divided by `per` (> 0), rounded to 0.1 after
 * scaling by `scale`; null where either snapshot could not read the process, or `per` is not > 0.
 */
function cpuDifferences(
  before: CpuSnapshot,
  after: CpuSnapshot,
  per: number,
  scale: number,
): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const [label, a] of after) {
    const b = before.get(label);
    out.set(
      label,
      a === null || b === null || b === undefined || per <= 0
        ? null
        : Math.round(((a - b) * scale * 10) / per) / 10,
    );
  }
  return out;
}

/**
 * CPU microseconds per message of each process between two snapshots, rounded to 0.1 us; null
 * where either snapshot could not read the process.
 */
export function cpuPerMessageUs(
  before: CpuSnapshot,
  after: CpuSnapshot,
  messages: number,
): Map<string, number | null> {
  return cpuDifferences(before, after, messages, 1000);
}

/** Runs `fn` and measures each process's CPU per message over it. */
export async function measureCpu<T>(
  processes: readonly CountedProcess[],
  messages: number,
  fn: () => Promise<T>,
): Promise<{ value: T; cpuUs: Map<string, number | null> }> {
  const before = cpuSnapshot(processes);
  const value = await fn();
  return { value, cpuUs: cpuPerMessageUs(before, cpuSnapshot(processes), messages) };
}

/**
 * CPU ms per second of wall time of each process between two snapshots `seconds` apart, rounded
 * to 0.1 ms; null where either snapshot could not read the process.
 */
export function cpuMsPerSecond(
  before: CpuSnapshot,
  after: CpuSnapshot,
  seconds: number,
): Map<string, number | null> {
  return cpuDifferences(before, after, seconds, 1);
}

/**
 * CPU ms per second of each process over `ms` of wall time in which the bench sends nothing: what
 * it spends whatever the traffic (heartbeats, status messages, timers), which a round's CPU per
 * message includes in proportion to how long the round took.
 */
export async function idleCpuMsPerSecond(
  processes: readonly CountedProcess[],
  ms: number,
): Promise<Map<string, number | null>> {
  const before = cpuSnapshot(processes);
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return cpuMsPerSecond(before, cpuSnapshot(processes), (performance.now() - start) / 1000);
}

/** One line: `client 5.1 us, leader n1 30.2 us, follower n2 12.0 us (total 47.3 us)` per message. */
export function formatCpuPerMessage(cpuUs: ReadonlyMap<string, number | null>): string {
  const parts: string[] = [];
  let total = 0;
  let complete = true;
  for (const [label, us] of cpuUs) {
    parts.push(`${label} ${us === null ? '-' : us.toFixed(1)} us`);
    if (us === null) complete = false;
    else total += us;
  }
  return `${parts.join(', ')}${complete && parts.length > 1 ? ` (total ${total.toFixed(1)} us)` : ''}`;
}
