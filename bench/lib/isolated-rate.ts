/**
 * The rate of one function measured in a process of its own, so that no earlier measurement can
 * change it: in one long process, the call sites the benched code shares (the encoder's writers,
 * the frame reader) collect type feedback from every case before, and the garbage and the
 * allocator's state of earlier cases are there too (a case ran 5-7x apart between runs of the same
 * code). The parent spawns `node --import tsx <bench file> --rate-child <args>`; the bench file
 * calls `measureRate` on the one function the args name and `printRate` prints the result.
 */
import { spawn } from 'node:child_process';

export interface Rate {
  /** calls per second of wall time over the measured phase */
  opsPerSec: number;
  /** this process's CPU time (user + system, every thread, GC included) per call, microseconds */
  cpuUsPerOp: number;
  /** minor page faults of the process per call */
  faultsPerOp: number;
}

export interface RatePhases {
  /** time spent calling the function before measuring (compilation, heap and allocator settle) */
  warmupMs: number;
  /** length of the measured phase */
  measureMs: number;
}

export const RATE_CHILD_FLAG = '--rate-child';

let sink: unknown;
/** the calls, their results kept so that the optimizer cannot drop them */
function calls(fn: () => unknown, n: number): void {
  for (let i = 0; i < n; i++) sink = fn();
}

/** runs `fn` in batches of about 5 ms until `ms` have passed; returns the number of calls */
function runFor(fn: () => unknown, ms: number, batch: { size: number }): number {
  const end = performance.now() + ms;
  let n = 0;
  for (;;) {
    const t0 = performance.now();
    calls(fn, batch.size);
    n += batch.size;
    const now = performance.now();
    if (now - t0 < 5 && batch.size < 1 << 24) batch.size *= 2;
    if (now >= end) return n;
  }
}

/** Child side: warm up, then measure `fn` over `measureMs` of wall time. */
export function measureRate(fn: () => unknown, phases: RatePhases): Rate {
  const batch = { size: 1 };
  runFor(fn, phases.warmupMs, batch);
  const cpu0 = process.cpuUsage();
  const faults0 = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  const n = runFor(fn, phases.measureMs, batch);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const faults = process.resourceUsage().minorPageFault - faults0;
  void sink;
  return {
    opsPerSec: (n * 1000) / ms,
    cpuUsPerOp: (cpu.user + cpu.system) / n,
    faultsPerOp: faults / n,
  };
}

/** Child side: the one line the parent reads. */
export function printRate(rate: Rate): void {
  process.stdout.write(`${JSON.stringify(rate)}\n`);
}

/** Parent side: runs `file --rate-child ...args` in a fresh node process and returns its Rate. */
export function rateInChild(file: string, args: readonly string[]): Promise<Rate> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, RATE_CHILD_FLAG, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('{')) {
        reject(new Error(`rate child ${args.join(' ')} exited ${code}: ${err.trim() || out.trim()}`));
        return;
      }
      resolve(JSON.parse(last) as Rate);
    });
  });
}

/** the median of a non-empty list (the mean of the middle two for an even count) */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
