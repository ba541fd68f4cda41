/**
 * Periodic jobs of one period share one timer, so that they run in one wake-up of the process;
 * and a process that is awake anyway for a regular reason of its own (a cluster member's Raft
 * heartbeats) runs them then, so that they cost no wake-up of their own (docs/cluster-member.md#timers).
 *
 * An idle process spends much of its CPU waking up: a bare Node process with a 10 ms interval
 * costs 7-12 ms of CPU a second here. Intervals of the same period do not share wake-ups on their
 * own: Node fires each at its own start time plus the period, and re-arms it from the moment it
 * ran, so two started apart, or one delayed by a millisecond past the other, stay apart for good.
 * One timer per period, its jobs run in turn, keeps them together by construction.
 */

interface Job {
  readonly run: () => void;
  /** Keeps the process alive while it is registered (an interval's default; `unref()` is false). */
  readonly ref: boolean;
}

interface Period {
  readonly ms: number;
  /** How early a round may run from `runDueIntervals`. */
  readonly early: number;
  /** How late its own timer may run it while `runDueIntervals` is called (and would run it first). */
  readonly late: number;
  readonly jobs: Set<Job>;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When its jobs last ran. */
  lastRun: number;
}

/**
 * A round may run up to EARLY_MS before its period is up when the process is awake anyway, and
 * its own timer waits up to LATE_MS past it while that happens (less for periods under 100 ms):
 * the window between is as long as the longest gap between such calls it locks onto (a cluster
 * member's heartbeat interval: 50 ms by default, up to 100 ms), so a call falls in it whatever
 * their phase.
 */
const EARLY_MS = 40;
const LATE_MS = 60;

const periods = new Map<number, Period>();
/** The earliest moment a round of some period may run early (`runDueIntervals` returns before it). */
let earliest = Number.POSITIVE_INFINITY;
/** The last call of `runDueIntervals`. */
let lastAwake = Number.NEGATIVE_INFINITY;

/**
 * Runs `run` every `ms` milliseconds, with the other jobs of that period, until the returned
 * function is called. Jobs run in the order they were added. `ref: false` is
 * `setInterval(...).unref()`: the timer keeps the process alive only while some job of its period
 * has `ref` true (the default).
 */
export function sharedInterval(ms: number, run: () => void, opts: { ref?: boolean } = {}): () => void {
  let p = periods.get(ms);
  if (p === undefined) {
    p = {
      ms,
      early: Math.min(EARLY_MS, Math.floor(ms * 0.4)),
      late: Math.min(LATE_MS, Math.floor(ms * 0.6)),
      jobs: new Set(),
      timer: undefined,
      lastRun: performance.now(),
    };
    periods.set(ms, p);
    arm(p, ms);
    earliest = Math.min(earliest, p.lastRun + ms - p.early);
  }
  const period = p;
  const job: Job = { run, ref: opts.ref ?? true };
  period.jobs.add(job);
  holdProcess(period);
  return () => {
    if (!period.jobs.delete(job)) return;
    if (period.jobs.size > 0) holdProcess(period);
    else {
      if (period.timer !== undefined) clearTimeout(period.timer);
      period.timer = undefined;
      if (periods.get(ms) === period) periods.delete(ms);
    }
  };
}

/**
 * The process is awake anyway (a cluster member sent or received its Raft heartbeats): run now
 * the rounds that are due within EARLY_MS. While such calls keep coming (one in the last two
 * periods), a round's own timer waits its period plus LATE_MS, so that the call that comes about
 * a period later runs it, even one a little late; once they stop, exactly its period again.
 * Cheap when nothing is due (one comparison).
 */
export function runDueIntervals(): void {
  const now = performance.now();
  lastAwake = now;
  if (now < earliest) return;
  const due: Period[] = [];
  earliest = Number.POSITIVE_INFINITY;
  for (const p of periods.values()) {
    if (now >= p.lastRun + p.ms - p.early) {
      p.lastRun = now;
      arm(p, p.ms + p.late);
      due.push(p);
    }
    earliest = Math.min(earliest, p.lastRun + p.ms - p.early);
  }
  for (const p of due) for (const job of p.jobs) job.run();
}

function arm(p: Period, ms: number): void {
  if (p.timer !== undefined) clearTimeout(p.timer);
  p.timer = setTimeout(() => {
    p.timer = undefined;
    if (periods.get(p.ms) !== p) return;
    p.lastRun = performance.now();
    arm(p, p.lastRun - lastAwake < 2 * p.ms ? p.ms + p.late : p.ms);
    earliest = Math.min(earliest, p.lastRun + p.ms - p.early);
    for (const job of p.jobs) job.run();
  }, ms);
  holdProcess(p);
}

function holdProcess(p: Period): void {
  if (p.timer === undefined) return;
  let ref = false;
  for (const job of p.jobs) ref ||= job.ref;
  if (ref) p.timer.ref();
  else p.timer.unref();
}
