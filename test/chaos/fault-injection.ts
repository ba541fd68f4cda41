/**
 * The fault-injection phase of a chaos run (run.ts): after the warm-up, one nemesis per cluster
 * runs its schedule (fixed, or drawn from the seed: seed + i for side i) while the producers send.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { type NemesisEvent, runNemesis } from './nemesis.js';
import type { ChaosOptions } from './run-types.js';
import { type FaultKind, type NemesisStep, randomSchedule } from './schedule.js';
import type { Side } from './sides.js';

export interface FaultInjection {
  /** the run's options: its schedules, duration and warm-up */
  o: ChaosOptions;
  sides: readonly Side[];
  seed: number;
  faults: readonly FaultKind[];
  /** when the producers' time is up: a seeded schedule stops then */
  stopAt: number;
  /** a fixed schedule runs to its end */
  fixedSchedule: boolean;
  /** the member the producers are on (`victims: 'client'` on a side without its own) */
  producerMember: () => string | undefined;
  /** the history's clock, for the nemesis events */
  now: () => number;
  log: (line: string) => void;
}

/** Runs every side's nemesis to its end (or the end of the run); its events, by start, `side: ` prefixed. */
export async function injectFaults({
  o,
  sides,
  seed,
  faults,
  stopAt,
  fixedSchedule,
  producerMember,
  now,
  log,
}: FaultInjection): Promise<NemesisEvent[]> {
  // the nemesis of each cluster: a fixed schedule, or one drawn from the seed (seed + i for side i)
  const stepsOf = (i: number): readonly NemesisStep[] =>
    (i > 0 ? (o.downstreamSchedule ?? o.schedule) : o.schedule) ??
    randomSchedule({
      seed: seed + i,
      faults,
      ids: sides[i]!.target.ids,
      durationMs: Math.max(0, o.durationMs - (o.warmupMs ?? 2_000)),
    });
  log(`nemesis schedule: ${sides.map((_, i) => stepsOf(i).length).join(' + ')} step(s)`);
  const abort = new AbortController();
  // a seeded schedule stops at the end of the run; a fixed one runs to its end
  const stopTimer = fixedSchedule
    ? undefined
    : setTimeout(() => abort.abort(), Math.max(0, stopAt - Date.now()));
  await sleep(o.warmupMs ?? 2_000);
  const perSide = await Promise.all(
    sides.map((side, i) =>
      runNemesis({
        target: side.target,
        steps: stepsOf(i),
        clientMember: side.clientMember ?? producerMember,
        now,
        signal: abort.signal,
        log: side.name ? (line) => log(`${side.name} ${line}`) : log,
      }).then((events) =>
        side.name ? events.map((e) => ({ ...e, fault: `${side.name}: ${e.fault}` })) : events,
      ),
    ),
  );
  const nemesisEvents = perSide.flat().sort((a, b) => a.start - b.start);
  clearTimeout(stopTimer);
  return nemesisEvents;
}
