/**
 * The chaos command's output (run.ts): the history file, the summary and any failed subscription
 * on stderr, and the checker's JSON on stdout, its detail lists capped.
 */
import { writeFileSync } from 'node:fs';
import { passesRun, type TotalQueueResult } from './checker.js';
import type { ChaosReport } from './run-types.js';

const LIST_CAP = 50;

/** The checker result with its detail lists capped (a bad run can lose thousands). */
export function printableResult(r: TotalQueueResult): unknown {
  const cap = <T>(xs: T[]) =>
    xs.length > LIST_CAP ? [...xs.slice(0, LIST_CAP), `... ${xs.length - LIST_CAP} more`] : xs;
  const d = r.details;
  return {
    ...r,
    details: {
      ...d,
      lost: cap(d.lost.map(String)),
      unexpected: cap(d.unexpected.map(String)),
      duplicated: cap(d.duplicated.map(String)),
      recovered: cap(d.recovered.map(String)),
      dequeuedAfterFail: cap(d.dequeuedAfterFail.map(String)),
    },
  };
}

/** Writes the history to `historyFile` (if given), then prints the report as the chaos command does. */
export function printReport(report: ChaosReport, historyFile: string | undefined): void {
  if (historyFile) {
    // with --topic both histories, under their names; else the queue history alone, as always
    const topicOps = report.topicHistory?.ops;
    const ops = report.history.ops;
    writeFileSync(historyFile, JSON.stringify(topicOps ? { queues: ops, topic: topicOps } : ops));
  }
  process.stderr.write(`${JSON.stringify(report.summary, null, 2)}\n`);
  // a failed subscription's lists (the summary has its counts only)
  for (const s of report.subscriptions ?? []) {
    if (!passesRun(s.result)) {
      process.stderr.write(`subscription ${s.name}: ${JSON.stringify(printableResult(s.result), null, 2)}\n`);
    }
  }
  process.stdout.write(`${JSON.stringify(printableResult(report.result), null, 2)}\n`);
}
