/**
 * What every in-process fuzz file shares: the case budget (FUZZ_CASES), a broker with short
 * timeouts, a sentinel queue of known messages that must come through intact, a healthy peer
 * exercised throughout, periodic cleanup and the memory bound.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { expect } from 'vitest';
import { GoodPeer } from './good-peer.js';
import { type BrokerOptions, InProcessBroker } from './harness.js';
import { outputProblems, runUntilEnded } from './invariants.js';
import * as S from './script.js';

/** Total in-process cases per CI run across the fuzz files; raise for a soak. */
export const TOTAL_CASES = Number(process.env.FUZZ_CASES ?? 100_000);
/** This fraction of the total (at least 20 cases). */
export const share = (fraction: number): number => Math.max(20, Math.round(TOTAL_CASES * fraction));

/** Long enough that the healthy peer (on the wall clock) never idles out between its frames. */
export const IDLE_MS = 5000;
export const HANDSHAKE_MS = 1000;
/** Fake time after the last input within which every connection must have ended. */
export const END_BOUND_MS = IDLE_MS + HANDSHAKE_MS + 2000 + 2000;
export const MAX_MESSAGE_SIZE = 64 * 1024;

export const SENTINEL_QUEUE = 'sentinel.known';
const SENTINEL_COUNT = 50;

let gcFn: (() => void) | undefined;
export function gc(): void {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  }
  gcFn();
}

export interface FuzzContext {
  broker: InProcessBroker;
  good: GoodPeer;
  cases: number;
  /** heapUsed + arrayBuffers after a full GC at the start (bytes). */
  baseline: number;
  /** Highest heapUsed + arrayBuffers sampled during the run (bytes). */
  peak: number;
  sentinel: Uint8Array[];
  started: number;
}

export async function setUpFuzz(options: BrokerOptions = {}): Promise<FuzzContext> {
  const broker = new InProcessBroker({
    idleTimeoutMs: IDLE_MS,
    handshakeTimeoutMs: HANDSHAKE_MS,
    maxMessageSize: MAX_MESSAGE_SIZE,
    ...options,
  });
  // the sentinel queue gets its known messages through a normal session
  const p = broker.peer();
  const steps = S.validSession(SENTINEL_QUEUE, SENTINEL_COUNT);
  const transfers = steps[2]!.slice(1);
  // a few at a time: within any publisher credit the options give
  const batches: Uint8Array[][] = [];
  for (let i = 0; i < transfers.length; i += 4) batches.push(transfers.slice(i, i + 4));
  for (const step of [steps[0]!, [S.attachSender(0, 0, SENTINEL_QUEUE)], ...batches]) {
    p.feed(S.concat(step));
    await p.settle();
  }
  p.feed(S.close());
  await p.settle();
  const sentinel = broker.backend.state.browse(SENTINEL_QUEUE).map((m) => Uint8Array.from(m.message));
  expect(sentinel.length).toBe(SENTINEL_COUNT);
  const good = await GoodPeer.open(broker, 'good.peer');
  await good.roundTrip();
  gc();
  const m = process.memoryUsage();
  return {
    broker,
    good,
    cases: 0,
    baseline: m.heapUsed + m.arrayBuffers,
    peak: 0,
    sentinel,
    started: Date.now(),
  };
}

const KEEP = new Set([SENTINEL_QUEUE, 'good.peer']);

/** Call after every case: periodic healthy round trip, cleanup and memory sample. */
export async function afterCase(ctx: FuzzContext): Promise<void> {
  ctx.cases++;
  if (ctx.cases % 50 === 0) ctx.good.heartbeat();
  if (ctx.cases % 500 === 0) {
    await ctx.good.roundTrip();
    const m = process.memoryUsage();
    ctx.peak = Math.max(ctx.peak, m.heapUsed + m.arrayBuffers);
  }
  if (ctx.cases % 2000 === 0) await ctx.broker.deleteQueuesExcept(KEEP);
}

/** End-of-file checks: sentinel intact, healthy peer still served, memory back near baseline. */
export async function tearDownFuzz(ctx: FuzzContext, label: string): Promise<void> {
  await ctx.good.roundTrip();
  expect(ctx.good.ended).toBe(false);
  const info = ctx.broker.backend.state.queueInfo(SENTINEL_QUEUE);
  expect(info?.depth).toBe(ctx.sentinel.length);
  expect(info?.available).toBe(ctx.sentinel.length);
  const now = ctx.broker.backend.state.browse(SENTINEL_QUEUE).map((m) => Buffer.from(m.message));
  expect(now).toEqual(ctx.sentinel.map((b) => Buffer.from(b)));
  await ctx.broker.deleteQueuesExcept(KEEP);
  gc();
  const m = process.memoryUsage();
  const after = m.heapUsed + m.arrayBuffers;
  const mib = (n: number) => Math.round((n / 1048576) * 10) / 10;
  // one line per file for the report: cases, wall time, memory
  process.stdout.write(
    `${JSON.stringify({
      fuzz: label,
      cases: ctx.cases,
      seconds: (Date.now() - ctx.started) / 1000,
      goodRoundTrips: ctx.good.roundTrips,
      baselineMiB: mib(ctx.baseline),
      peakMiB: mib(ctx.peak),
      afterGcMiB: mib(after),
      protocolErrors: ctx.broker.ctx.counters.protocolErrors,
    })}\n`,
  );
  // nothing a hostile peer sent may stay allocated once its connection is gone
  expect(after - ctx.baseline).toBeLessThan(48 * 1024 * 1024);
  expect(ctx.peak - ctx.baseline).toBeLessThan(256 * 1024 * 1024);
  ctx.good.close();
  await ctx.broker.close();
}

/** The generic per-case checks: output well-formed and in order, connection ended in bounded time. */
export function finishCase(p: ReturnType<InProcessBroker['peer']>): void {
  runUntilEnded(p, END_BOUND_MS);
  const problems = outputProblems(p.frames());
  if (problems.length > 0) throw new Error([...problems, ...p.broker.loggedErrors].join('; '));
}
