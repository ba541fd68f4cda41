/**
 * Where this process's CPU goes, per thread, and how it reads its socket: a snapshot of every
 * thread's user and system ticks, voluntary context switches, write syscalls and minor page faults
 * (`/proc/self/task/<tid>/stat`, `status`, `io`) and of the process's read and write syscalls
 * and bytes (`/proc/self/io`), taken before and after a measured phase (receive-cpu's
 * `--threads`). Node 20 names every thread `node`, so threads are told apart by id: `main` (its
 * id is the process's) and `others` (V8's platform workers: concurrent marking, sweeping and
 * compiling; the libuv pool, idle in a receive). A write syscall by the main thread is a socket
 * write or a wake-up it posts itself (an 8-byte eventfd write: a V8 task queued for the main
 * thread). Linux only; 10 ms ticks, so a phase should take a few hundred ms of CPU.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { clockTicksPerSecond, parseProcStat } from './process-cpu.js';

interface ThreadSample {
  utime: number;
  stime: number;
  switches: number;
  writes: number;
  faults: number;
}

/** A thread that started after the first mark: everything it did counts. */
const NO_SAMPLE: ThreadSample = { utime: 0, stime: 0, switches: 0, writes: 0, faults: 0 };

interface IoSample {
  syscr: number;
  syscw: number;
  rchar: number;
  wchar: number;
}

/** One snapshot: threads by id, the process's I/O syscalls, and when. */
export interface ThreadMark {
  threads: Map<number, ThreadSample>;
  io: IoSample;
  at: number;
}

/** Per message since a mark: CPU us (user, system), voluntary switches, writes and minor faults, per group. */
export interface ThreadGroupCost {
  userUs: number;
  sysUs: number;
  switches: number;
  writes: number;
  faults: number;
}

export interface ThreadCost {
  msgPerSec: number;
  main: ThreadGroupCost;
  others: ThreadGroupCost;
  /** read syscalls per message and bytes per read (the broker's write pattern, as we read it) */
  reads: number;
  bytesPerRead: number;
  writes: number;
  bytesPerWrite: number;
}

const readIo = (path: string): IoSample => {
  const fields = new Map<string, number>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const [k, v] = line.split(':');
    if (k && v) fields.set(k.trim(), Number(v));
  }
  return {
    syscr: fields.get('syscr') ?? 0,
    syscw: fields.get('syscw') ?? 0,
    rchar: fields.get('rchar') ?? 0,
    wchar: fields.get('wchar') ?? 0,
  };
};

export function threadMark(): ThreadMark {
  const threads = new Map<number, ThreadSample>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = parseProcStat(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8'));
      const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
      const switches = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const writes = readIo(`/proc/self/task/${tid}/io`).syscw;
      threads.set(Number(tid), {
        utime: stat.utime,
        stime: stat.stime,
        switches,
        writes,
        faults: stat.minflt,
      });
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return { threads, io: readIo('/proc/self/io'), at: performance.now() };
}

export function threadCostSince(from: ThreadMark, messages: number): ThreadCost {
  const now = threadMark();
  const group = (): ThreadGroupCost => ({ userUs: 0, sysUs: 0, switches: 0, writes: 0, faults: 0 });
  const main = group();
  const others = group();
  const tickUs = 1e6 / clockTicksPerSecond();
  for (const [tid, t] of now.threads) {
    const f = from.threads.get(tid) ?? NO_SAMPLE;
    const g = tid === process.pid ? main : others;
    g.userUs += ((t.utime - f.utime) * tickUs) / messages;
    g.sysUs += ((t.stime - f.stime) * tickUs) / messages;
    g.switches += (t.switches - f.switches) / messages;
    g.writes += (t.writes - f.writes) / messages;
    g.faults += (t.faults - f.faults) / messages;
  }
  const reads = now.io.syscr - from.io.syscr;
  const writes = now.io.syscw - from.io.syscw;
  return {
    msgPerSec: (messages * 1000) / (now.at - from.at),
    main,
    others,
    reads: reads / messages,
    bytesPerRead: (now.io.rchar - from.io.rchar) / Math.max(reads, 1),
    writes: writes / messages,
    bytesPerWrite: (now.io.wchar - from.io.wchar) / Math.max(writes, 1),
  };
}

/** One line: `main u 4.3 s 1.8 vcs 0.118 w 0.002; others ...; reads ...; writes ...`. */
export function formatThreadCost(c: ThreadCost): string {
  const g = (name: string, x: ThreadGroupCost) =>
    `${name} u ${x.userUs.toFixed(1)} s ${x.sysUs.toFixed(1)} vcs ${x.switches.toFixed(3)} w ${x.writes.toFixed(3)} pf ${x.faults.toFixed(3)}`;
  return [
    `${Math.round(c.msgPerSec)} msg/s`,
    g('main', c.main),
    g('others', c.others),
    `reads ${c.reads.toFixed(3)}/msg ${Math.round(c.bytesPerRead)} B/read`,
    `writes ${c.writes.toFixed(3)}/msg ${Math.round(c.bytesPerWrite)} B/write`,
  ].join('; ');
}
