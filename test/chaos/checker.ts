/**
 * Jepsen `total-queue` checker over a recorded history (docs/delivery-contract.md#checker), as a
 * pure function.
 *
 * History: every client operation as invoke / ok / fail / info, e.g.
 *   { process: 1, type: 'invoke', f: 'enqueue', value: 'm-17', time: 12.5 }
 *   { process: 1, type: 'ok',     f: 'enqueue', value: 'm-17', time: 14.0 }   // send() accepted
 *   { process: 2, type: 'ok',     f: 'dequeue', value: 'm-17', time: 20.1, acceptConfirmed: true }
 * including the final drain's dequeues. An enqueue is ok when send() resolved accepted, fail when
 * it surely did not arrive, info when in doubt. A dequeue is recorded ok when the message was
 * handed to the application; `acceptConfirmed` (default true) says whether its accept() resolved
 * (false: handed out, accept in doubt).
 *
 * Counts, as Jepsen defines them over multisets of values:
 *   attempts    = values of enqueue invokes          -> attempt-count
 *   enqueues    = values of ok enqueues              -> acknowledged-count
 *   dequeues    = values of ok dequeues
 *   ok          = dequeues intersect attempts        -> ok-count
 *   unexpected  = dequeues of values never attempted -> unexpected-count
 *   duplicated  = dequeues - attempts - unexpected   -> duplicated-count
 *   lost        = enqueues - dequeues                -> lost-count
 *   recovered   = ok - enqueues                      -> recovered-count
 * With competing consumers (`singleConsumerPerQueue: false`) a surplus dequeue counts as
 * duplicated only when an earlier delivery of that value had its accept confirmed (an accept in
 * doubt may let another consumer see the message: at-least-once).
 * valid = lost 0, unexpected 0 and duplicated 0 (duplicates as just defined; set
 * `allowDuplicates: true` for Jepsen's own rule, which ignores them).
 */

export type OpType = 'invoke' | 'ok' | 'fail' | 'info';
export type QueueFunction = 'enqueue' | 'dequeue';
export type QueueValue = string | number | bigint;

export interface HistoryOp {
  process: number | string;
  type: OpType;
  f: QueueFunction;
  /** enqueue: the unique message id; dequeue: the value dequeued (absent on invoke) */
  value?: QueueValue | null;
  time?: number;
  /** ok dequeues: whether accept() resolved (default true) */
  acceptConfirmed?: boolean;
  /** informational: part of the final drain */
  final?: boolean;
}

export interface CheckerOptions {
  /** one consumer per queue: every surplus dequeue is a duplicate. Default true. */
  singleConsumerPerQueue?: boolean;
  /** judge validity as Jepsen does (lost and unexpected only). Default false. */
  allowDuplicates?: boolean;
}

export interface CheckerDetails {
  lost: QueueValue[];
  unexpected: QueueValue[];
  /** one entry per counted surplus dequeue */
  duplicated: QueueValue[];
  recovered: QueueValue[];
  /** Jepsen's duplicated count, before the competing-consumer rule */
  rawDuplicatedCount: number;
  /** values dequeued although their enqueue was recorded `fail` (surely not sent) */
  dequeuedAfterFail: QueueValue[];
}

export interface TotalQueueResult {
  'attempt-count': number;
  'acknowledged-count': number;
  'ok-count': number;
  'lost-count': number;
  'unexpected-count': number;
  'duplicated-count': number;
  'recovered-count': number;
  valid: boolean;
  details: CheckerDetails;
}

interface Tally {
  value: QueueValue;
  attempts: number;
  acked: number;
  failed: number;
  /** ok dequeues in time order: confirmed or not */
  dequeues: boolean[];
}

function keyOf(v: QueueValue): string {
  return `${typeof v}:${String(v)}`;
}

export function checkTotalQueue(
  history: readonly HistoryOp[],
  options: CheckerOptions = {},
): TotalQueueResult {
  const single = options.singleConsumerPerQueue ?? true;
  const tallies = new Map<string, Tally>();
  const tally = (v: QueueValue): Tally => {
    const k = keyOf(v);
    let t = tallies.get(k);
    if (t === undefined) {
      t = { value: v, attempts: 0, acked: 0, failed: 0, dequeues: [] };
      tallies.set(k, t);
    }
    return t;
  };

  // dequeue order matters for the competing-consumer rule: by time when every op has one,
  // else history order; ties keep history order
  const indexed = history.map((op, i) => ({ op, i }));
  if (history.every((op) => typeof op.time === 'number')) {
    indexed.sort((a, b) => a.op.time! - b.op.time! || a.i - b.i);
  }

  for (const { op } of indexed) {
    if (op.value === undefined || op.value === null) continue;
    if (op.f === 'enqueue') {
      if (op.type === 'invoke') tally(op.value).attempts++;
      else if (op.type === 'ok') tally(op.value).acked++;
      else if (op.type === 'fail') tally(op.value).failed++;
    } else if (op.f === 'dequeue' && op.type === 'ok') {
      tally(op.value).dequeues.push(op.acceptConfirmed !== false);
    }
  }

  let attemptCount = 0;
  let ackCount = 0;
  let okCount = 0;
  let rawDup = 0;
  const details: CheckerDetails = {
    lost: [],
    unexpected: [],
    duplicated: [],
    recovered: [],
    rawDuplicatedCount: 0,
    dequeuedAfterFail: [],
  };
  for (const t of tallies.values()) {
    const d = t.dequeues.length;
    attemptCount += t.attempts;
    ackCount += t.acked;
    if (t.attempts === 0) {
      for (let i = 0; i < d; i++) details.unexpected.push(t.value);
    } else {
      const ok = Math.min(d, t.attempts);
      okCount += ok;
      for (let i = 0; i < ok - t.acked; i++) details.recovered.push(t.value);
      rawDup += Math.max(0, d - t.attempts);
      let confirmedBefore = false;
      t.dequeues.forEach((confirmed, i) => {
        if (i >= t.attempts && (single || confirmedBefore)) details.duplicated.push(t.value);
        confirmedBefore ||= confirmed;
      });
      if (t.failed > 0 && d > 0) details.dequeuedAfterFail.push(t.value);
    }
    for (let i = 0; i < t.acked - d; i++) details.lost.push(t.value);
  }
  details.rawDuplicatedCount = rawDup;

  const lost = details.lost.length;
  const unexpected = details.unexpected.length;
  const duplicated = details.duplicated.length;
  return {
    'attempt-count': attemptCount,
    'acknowledged-count': ackCount,
    'ok-count': okCount,
    'lost-count': lost,
    'unexpected-count': unexpected,
    'duplicated-count': duplicated,
    'recovered-count': details.recovered.length,
    valid: lost === 0 && unexpected === 0 && (options.allowDuplicates === true || duplicated === 0),
    details,
  };
}

/**
 * Topics: each subscription judged as its own queue whose expected set is every publish (every
 * enqueue of `history`) and whose dequeues are the ones its process (the subscription's name)
 * recorded. One receiver per subscription, but without receiver dedup a hand-out after an
 * accept in doubt is at-least-once, so the competing-consumer rule applies: a surplus counts as
 * duplicated only after a confirmed accept.
 */
export function checkSubscriptions(
  history: readonly HistoryOp[],
  subscriptions: readonly string[],
): Map<string, TotalQueueResult> {
  const results = new Map<string, TotalQueueResult>();
  for (const name of subscriptions) {
    const ops = history.filter((op) => op.f === 'enqueue' || op.process === name);
    results.set(name, checkTotalQueue(ops, { singleConsumerPerQueue: false }));
  }
  return results;
}

/**
 * The chaos runner's verdict on one check: valid with lost 0, unexpected 0 and duplicated 0, and
 * at least one acknowledged enqueue (a run that acknowledged nothing proves nothing).
 */
export function passesRun(r: TotalQueueResult): boolean {
  return (
    r.valid &&
    r['lost-count'] === 0 &&
    r['unexpected-count'] === 0 &&
    r['duplicated-count'] === 0 &&
    r['acknowledged-count'] > 0
  );
}
