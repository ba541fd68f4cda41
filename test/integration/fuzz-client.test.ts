/**
 * Our client against a hostile fake server (net server on 127.0.0.1:0): at a generated stage of
 * the handshake (protocol header, SASL, Open, Begin, Attach) the server answers with garbage, an
 * oversized frame, a half-written frame, silence, a Close with an error, a frame out of order, a
 * bit-flipped honest answer, a FIN or a reset. The client must settle every call within a bound,
 * with a typed error (an AmqpError subclass with a known condition; the server's own condition
 * when it closed with one, amqp:connection:framing-error for an oversized frame), never crash
 * (no uncaught exception or unhandled rejection: vitest fails the file on one) and leak nothing
 * (no sockets left, heap back near its baseline).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AmqpError } from '../../src/errors.js';
import { type Connection, connect } from '../../src/index.js';
import { type Action, HostileServer, type Script, type Stage } from '../fuzz/hostile-server.js';
import { PROTOCOL_CONDITIONS } from '../fuzz/invariants.js';
import { pool } from '../fuzz/tcp-case.js';

const CASES = Number(process.env.FUZZ_CLIENT_CASES ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
const IDLE_MS = 800;
const CONNECT_TIMEOUT_MS = 2000;
/** Every call settles within this (connect deadline, idle timeout, close wait, slack). */
const BOUND_MS = 8000;

const stage: fc.Arbitrary<Stage> = fc.constantFrom('header', 'sasl-init', 'open', 'begin', 'attach');
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes): Action => ({ kind: 'garbage', bytes })),
  fc
    .oneof(
      fc.constantFrom(0xffffffff, 0x80000000, 0x7fffffff),
      fc.integer({ min: 1024 * 1024 + 1, max: 0xffffffff }),
    )
    .map((size): Action => ({ kind: 'oversize', size })),
  fc.constant<Action>({ kind: 'half-frame' }),
  fc.constant<Action>({ kind: 'silence' }),
  fc
    .constantFrom(
      'amqp:unauthorized-access',
      'amqp:resource-limit-exceeded',
      'amqp:connection:forced',
      'amqp:not-allowed',
    )
    .map((condition): Action => ({ kind: 'close', condition })),
  fc.constantFrom('begin', 'attach', 'transfer', 'flow', 'disposition', 'sasl-outcome').map(
    (frame): Action => ({
      kind: 'wrong-order',
      frame: frame as Extract<Action, { kind: 'wrong-order' }>['frame'],
    }),
  ),
  fc.tuple(fc.nat(), fc.nat({ max: 7 })).map(([at, bit]): Action => ({ kind: 'mutate', at, bit })),
  fc.constant<Action>({ kind: 'fin' }),
  fc.constant<Action>({ kind: 'reset' }),
);
const script: fc.Arbitrary<Script> = fc.record({ stage, action });

/** Conditions a client error may carry: the spec's plus the client's own. */
const CLIENT_CONDITIONS = new Set([
  ...PROTOCOL_CONDITIONS,
  'quorate:timeout',
  'quorate:closed',
  'quorate:aborted',
  'quorate:reconnect-exhausted',
  'quorate:connect-failed',
  'quorate:in-doubt',
]);

let gcFn: (() => void) | undefined;
function heapAfterGc(): number {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  }
  gcFn();
  return process.memoryUsage().heapUsed;
}

/** Open handles above the count at the start that the leak check allows (its margin; one home for the wait and the check). */
const HANDLE_SLACK = 2;

/** Open sockets, servers and the like (timers are not among them). */
function activeHandles(): number {
  return (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().length;
}

interface Outcome {
  script: Script;
  /** 'ok' when the whole conversation succeeded (a harmless mutation), else the error. */
  result: 'ok' | unknown;
  ms: number;
  /** The step that failed. */
  step?: 'connect' | 'openSender' | 'send';
}

/** Settles within `ms` or rejects: a hang is a failure of its own. */
function bounded<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`HANG: ${what} did not settle within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** One case: its own hostile server (port 0), one client conversation, then the server goes. */
async function runCase(s: Script): Promise<Outcome & { serverSocketsLeft: number }> {
  const server = new HostileServer(() => s);
  await server.listen();
  const o = await converse(server.port, s);
  // the client must have closed or dropped its socket by now (give the FIN a moment to land)
  for (let i = 0; i < 20 && server.openSockets > 0; i++) await new Promise((r) => setTimeout(r, 50));
  const serverSocketsLeft = server.openSockets;
  await server.close();
  return { ...o, serverSocketsLeft };
}

async function converse(port: number, s: Script): Promise<Outcome> {
  const started = Date.now();
  let conn: Connection | undefined;
  let step: Outcome['step'] = 'connect';
  try {
    conn = await bounded(
      connect({
        urls: `amqp://127.0.0.1:${port}`,
        // one attempt: the initial connect retries members until its deadline otherwise, and the
        // deadline's quorate:timeout would hide the server's condition
        reconnect: { maxAttempts: 1, initialDelayMs: 10, maxTimeMs: CONNECT_TIMEOUT_MS },
        idleTimeoutMs: IDLE_MS,
        timeoutMs: CONNECT_TIMEOUT_MS,
      }),
      BOUND_MS,
      'connect',
    );
    // errors after the handshake surface on the calls (and as events): keep the emitter quiet
    conn.on('error', () => {});
    step = 'openSender';
    const sender = await bounded(
      conn.openSender('q', { timeoutMs: CONNECT_TIMEOUT_MS }),
      BOUND_MS,
      'openSender',
    );
    step = 'send';
    await bounded(sender.send({ body: 'x' }, { timeoutMs: CONNECT_TIMEOUT_MS }), BOUND_MS, 'send');
    return { script: s, result: 'ok', ms: Date.now() - started };
  } catch (e) {
    return { script: s, result: e, ms: Date.now() - started, step };
  } finally {
    if (conn) await bounded(conn.close({ timeoutMs: 1000 }), BOUND_MS, 'close').catch(() => {});
  }
}

/**
 * The error under the client's wrappers: quorate:reconnect-exhausted carries the last attempt's
 * error; quorate:connect-failed carries the peer's AMQP error when there was one (a socket error
 * or a missing Open is its own root).
 */
function rootCause(e: AmqpError): unknown {
  let cur: unknown = e;
  for (;;) {
    if (!(cur instanceof AmqpError)) return cur;
    if (cur.condition === 'quorate:reconnect-exhausted' && cur.cause !== undefined) cur = cur.cause;
    else if (cur.condition === 'quorate:connect-failed' && cur.cause instanceof AmqpError) cur = cur.cause;
    else return cur;
  }
}

/** What is wrong with one outcome (empty: fine). */
function problems(o: Outcome): string[] {
  const p: string[] = [];
  const { action, stage: st } = o.script;
  if (o.result === 'ok') {
    // only a harmless bit flip (or a hostile answer past the last step we take) can succeed
    if (action.kind !== 'mutate' && action.kind !== 'wrong-order')
      p.push('succeeded against a hostile server');
    return p;
  }
  const e = o.result;
  if (!(e instanceof AmqpError)) {
    p.push(`untyped error at ${o.step}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    return p;
  }
  if (!CLIENT_CONDITIONS.has(e.condition))
    p.push(`unknown condition ${e.condition} at ${o.step}: ${e.message}`);
  // connect gives up with quorate:reconnect-exhausted or connect-failed, carrying the cause
  const root = rootCause(e);
  if (!(root instanceof AmqpError)) {
    p.push(`${e.condition} caused by an untyped error: ${String(root)}`);
    return p;
  }
  if (!CLIENT_CONDITIONS.has(root.condition)) p.push(`unknown condition ${root.condition}: ${root.message}`);
  if (action.kind === 'close' && st === 'open' && o.step === 'connect' && root.condition !== action.condition)
    p.push(`server closed with ${action.condition}, client rejected with ${root.condition}: ${e.message}`);
  if (action.kind === 'oversize' && st === 'open' && root.condition !== 'amqp:connection:framing-error')
    p.push(`oversized frame at ${st} gave ${root.condition}: ${e.message}`);
  return p;
}

describe(`our client against a hostile server (${CASES} cases, seed ${SEED})`, () => {
  it('every call settles in bounded time with a typed error, nothing crashes or leaks', async () => {
    const scripts = fc.sample(script, { numRuns: CASES, seed: SEED });
    // one warm-up conversation so module-level caches are not counted as a leak
    await runCase({ stage: 'attach', action: { kind: 'reset' } });
    const heapBefore = heapAfterGc();
    const handlesBefore = activeHandles();
    const started = Date.now();
    const failures: string[] = [];
    let slowest = 0;
    const counts = new Map<string, number>();
    await pool(
      scripts.map((s) => async () => {
        const o = await runCase(s);
        slowest = Math.max(slowest, o.ms);
        const key = o.result === 'ok' ? 'ok' : o.result instanceof AmqpError ? o.result.condition : 'untyped';
        counts.set(key, (counts.get(key) ?? 0) + 1);
        const p = problems(o);
        if (o.serverSocketsLeft > 0) p.push(`the client left ${o.serverSocketsLeft} socket(s) open`);
        if (p.length > 0 && failures.length < 10) failures.push(`${JSON.stringify(s)}: ${p.join('; ')}`);
      }),
      16,
    );
    const seconds = (Date.now() - started) / 1000;
    // the last cases' sockets may still be closing (a leaked one never does): the check below
    // reports what is left after up to 10 s
    const closingDeadline = Date.now() + 10_000;
    while (activeHandles() > handlesBefore + HANDLE_SLACK && Date.now() < closingDeadline) await sleep(50);
    const handlesAfter = activeHandles();
    const heapAfter = heapAfterGc();
    process.stdout.write(
      `${JSON.stringify({ fuzz: 'client', cases: scripts.length, seed: SEED, seconds, slowestMs: slowest, outcomes: Object.fromEntries(counts), heapGrowthMiB: Math.round((heapAfter - heapBefore) / 104857.6) / 10, handlesBefore, handlesAfter })}\n`,
    );
    expect(failures).toEqual([]);
    expect(handlesAfter).toBeLessThanOrEqual(handlesBefore + HANDLE_SLACK);
    expect(heapAfter - heapBefore).toBeLessThan(32 * 1024 * 1024);
  }, 900_000);
});
