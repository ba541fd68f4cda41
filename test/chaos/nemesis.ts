/**
 * Runs a nemesis schedule against a target, one fault at a time: inject, hold, heal, wait until
 * every member serves again (bounded), then the quiet gap. Every step is logged with its times so
 * a failing run can be read against the history.
 */
import { describeFault, type Fault, type NemesisStep, type Victims } from './schedule.js';
import type { ChaosTarget } from './target.js';

export interface NemesisEvent {
  /** ms since the run started */
  start: number;
  end: number;
  fault: string;
  /** members actually hit (for 'client' victims: resolved at injection time) */
  members?: string[];
  /** skipped: the target cannot inject it, or no victim was known */
  skipped?: string;
  /** the cluster served again within the recovery deadline after the heal */
  recovered?: boolean;
}

export interface NemesisOptions {
  target: ChaosTarget;
  steps: readonly NemesisStep[];
  /** the member the clients use right now (for `victims: 'client'`) */
  clientMember: () => string | undefined;
  /** ms since the run started */
  now: () => number;
  /** stop early (the run is over): the fault in force is healed first */
  signal: AbortSignal;
  /** how long to wait for the cluster to serve again after each heal. Default 60 s. */
  recoveryTimeoutMs?: number;
  log?: (line: string) => void;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function resolveVictims(v: Victims, opts: NemesisOptions): string[] {
  if (v !== 'client') return v;
  const m = opts.clientMember();
  return m ? [m] : [opts.target.ids[0]!];
}

/** Injects `fault`; returns the heal action and the members it hit. */
async function inject(
  fault: Fault,
  opts: NemesisOptions,
): Promise<{ heal: () => Promise<void>; members?: string[] }> {
  const t = opts.target;
  switch (fault.kind) {
    case 'kill': {
      const ids = resolveVictims(fault.victims, opts);
      for (const id of ids) await t.kill(id);
      return { members: ids, heal: async () => void (await Promise.all(ids.map((id) => t.start(id)))) };
    }
    case 'pause': {
      const ids = resolveVictims(fault.victims, opts);
      for (const id of ids) await t.pause(id);
      return { members: ids, heal: async () => void (await Promise.all(ids.map((id) => t.resume(id)))) };
    }
    case 'partition':
      t.partition(fault.groups);
      return { heal: async () => t.heal() };
    case 'ring':
      t.ring();
      return { heal: async () => t.heal() };
    case 'corrupt': {
      const ids = resolveVictims(fault.victims, opts).slice(0, 1);
      for (const id of ids) await t.kill(id);
      const damaged: string[] = [];
      for (const id of ids) {
        const what = await t.corrupt(id, fault.file, fault.at);
        if (what) damaged.push(what);
      }
      opts.log?.(`nemesis: damaged ${damaged.join(', ') || 'nothing (no such file yet)'}`);
      return { members: ids, heal: async () => void (await Promise.all(ids.map((id) => t.start(id)))) };
    }
    case 'restart-all': {
      // every member SIGKILLed at once, then all started again on their stores
      await Promise.all(t.ids.map((id) => t.kill(id)));
      return {
        members: [...t.ids],
        heal: async () => void (await Promise.all(t.ids.map((id) => t.start(id)))),
      };
    }
    case 'slow':
      t.slow(fault.ms);
      return { heal: async () => t.slow(0) };
    case 'lossy':
      t.lossy(fault.p);
      return { heal: async () => t.lossy(0) };
  }
}

export async function runNemesis(opts: NemesisOptions): Promise<NemesisEvent[]> {
  const events: NemesisEvent[] = [];
  const log = opts.log ?? (() => undefined);
  for (const step of opts.steps) {
    if (opts.signal.aborted) break;
    const name = describeFault(step.fault);
    const start = opts.now();
    if (!opts.target.supports(step.fault.kind)) {
      events.push({ start, end: start, fault: name, skipped: `${opts.target.name} cannot inject it` });
      continue;
    }
    const { heal, members } = await inject(step.fault, opts);
    log(`nemesis: ${name}${members ? ` -> ${members.join(',')}` : ''} for ${step.holdMs} ms`);
    await abortableSleep(step.holdMs, opts.signal);
    await heal();
    const healedAt = opts.now();
    const recovered = await opts.target.waitHealthy(opts.recoveryTimeoutMs ?? 60_000);
    log(`nemesis: healed ${name}; serving again after ${Math.round(opts.now() - healedAt)} ms`);
    events.push({ start, end: opts.now(), fault: name, members, recovered });
    await abortableSleep(step.gapMs, opts.signal);
  }
  return events;
}
