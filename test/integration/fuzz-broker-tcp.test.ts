/**
 * Hostile input over real TCP against a real broker process (the CLI, port 0): generated cases
 * (random frames after a valid prefix, mutated valid conversations, count / depth / size bombs,
 * malformed headers, protocol-order violations, slow partial frames) run many at a time while a
 * healthy client connection of ours keeps sending and receiving. Every case: the broker's output
 * decodes and respects Close/End ordering, no internal error, the expected condition where the
 * input determines it, the socket ended within a bound. After: the process is alive, its peak
 * RSS stayed bounded, the healthy connection never saw an error, a queue of known messages is
 * intact, and SIGTERM stops the broker cleanly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeConnection,
  connect as rheaConnect,
  sendAll,
  TestReceiver,
} from '../cluster-broker/server/rhea-client.js';
import {
  badHeader,
  countBomb,
  deepBomb,
  mutate,
  mutation,
  prefixFor,
  randomFrames,
  sizeBomb,
  stage,
} from '../fuzz/arbitraries.js';
import { outputProblems } from '../fuzz/invariants.js';
import * as S from '../fuzz/script.js';
import { pool, procMemory, runTcpCase } from '../fuzz/tcp-case.js';
import { type BrokerProcess, spawnBroker } from '../support/broker-process.js';

const CASES = Number(process.env.FUZZ_TCP_CASES ?? 2400);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
const IDLE_MS = 1500;
/** Handshake deadline (10 s, the CLI default) + close wait + slack: every case ends within it. */
const BOUND_MS = 20_000;
const CONCURRENCY = 64;

interface TcpCase {
  name: string;
  chunks: Uint8Array[];
  gapMs?: number;
  /** The condition the broker must close / end with. */
  close?: readonly string[];
  end?: readonly string[];
}

const split = (bytes: Uint8Array, cuts: number[]): Uint8Array[] => {
  if (bytes.length === 0) return [];
  const at = [...new Set(cuts.map((c) => c % bytes.length))].sort((a, b) => a - b);
  const res: Uint8Array[] = [];
  let prev = 0;
  for (const c of at) {
    if (c > prev) res.push(bytes.subarray(prev, c));
    prev = c;
  }
  res.push(bytes.subarray(prev));
  return res;
};
const cuts = fc.array(fc.nat(), { maxLength: 3 });

const randomCase: fc.Arbitrary<TcpCase> = fc
  .tuple(stage, fc.array(randomFrames, { minLength: 1, maxLength: 3 }), cuts)
  .map(([st, g, c]) => ({ name: `random after ${st}`, chunks: [prefixFor(st), ...split(S.concat(g), c)] }));

let q = 0;
const mutatedCase: fc.Arbitrary<TcpCase> = fc
  .tuple(fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 3 }), cuts)
  .map(([muts, n, c]) => {
    let bytes: Uint8Array = S.concat(S.validSession(`tcp.m${q++ % 8}`, n).flat());
    for (const m of muts) bytes = mutate(bytes, m);
    return { name: `mutated ${JSON.stringify(muts)}`, chunks: split(bytes, c) };
  });

const bombCase: fc.Arbitrary<TcpCase> = fc
  .tuple(fc.oneof(countBomb, deepBomb, sizeBomb, badHeader), cuts)
  .map(([b, c]) => ({
    name: b.name,
    chunks: [prefixFor('begin'), ...split(b.bytes, c)],
    close: b.conditions,
  }));

const h = fc.nat({ max: 1023 });
const orderCase: fc.Arbitrary<TcpCase> = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 255 }), h).map(
    ([ch, hd]): TcpCase => ({
      name: `attach on unbegun channel ${ch}`,
      chunks: [S.concat([S.AMQP_HEADER, S.open(), S.attachSender(ch, hd, 'tcp.o')])],
      close: ['amqp:illegal-state'],
    }),
  ),
  h.map(
    (hd): TcpCase => ({
      name: `transfer on unattached handle ${hd}`,
      chunks: [S.concat([...S.openedSession(), S.transfer(0, hd, 0, S.message('x')), S.close()])],
      end: ['amqp:session:unattached-handle'],
    }),
  ),
  h.map(
    (hd): TcpCase => ({
      name: `duplicate handle ${hd}`,
      chunks: [
        S.concat([
          ...S.openedSession(),
          S.attachSender(0, hd, 'tcp.o', 'a'),
          S.attachSender(0, hd, 'tcp.o', 'b'),
        ]),
      ],
      end: ['amqp:session:handle-in-use'],
    }),
  ),
  fc.integer({ min: 256, max: 0xffff }).map(
    (ch): TcpCase => ({
      name: `begin on channel ${ch}`,
      chunks: [S.concat([S.AMQP_HEADER, S.open(), S.begin(ch)])],
      close: ['amqp:connection:framing-error'],
    }),
  ),
  fc.constant<TcpCase>({
    name: 'frames after close',
    chunks: [
      S.concat([...S.openedSession(), S.close(), S.begin(1), S.attachSender(0, 0, 'tcp.o'), S.open()]),
    ],
  }),
);

/** Slow partial frames: one byte every 100 ms, never complete: the idle timeout must cut it. */
const slowCase: fc.Arbitrary<TcpCase> = fc
  .tuple(fc.constantFrom('open' as const, 'begin' as const), fc.integer({ min: 64, max: 512 }))
  .map(([st, size]) => {
    const head = Buffer.alloc(size);
    head.writeUInt32BE(size);
    head[4] = 2;
    const bytes = Array.from({ length: Math.min(size - 1, 60) }, (_, i) => head.subarray(i, i + 1));
    return {
      name: `slow ${size}-byte frame after ${st}`,
      chunks: [prefixFor(st), ...bytes],
      gapMs: 100,
      close: ['amqp:resource-limit-exceeded'],
    };
  });

function generate(): TcpCase[] {
  const take = (arb: fc.Arbitrary<TcpCase>, share: number, salt: number): TcpCase[] =>
    fc.sample(arb, { numRuns: Math.max(10, Math.round(CASES * share)), seed: SEED + salt });
  return [
    ...take(slowCase, 0.02, 5),
    ...take(randomCase, 0.38, 1),
    ...take(mutatedCase, 0.3, 2),
    ...take(bombCase, 0.2, 3),
    ...take(orderCase, 0.1, 4),
  ];
}

// ---- the healthy client (rhea: an independent peer, one connection for the whole run) ----

interface Healthy {
  roundTrips: number;
  errors: unknown[];
  stop: () => Promise<void>;
}

async function startHealthy(port: number): Promise<Healthy> {
  const conn = await rheaConnect({ port, containerId: 'healthy' });
  const h: Healthy = { roundTrips: 0, errors: [], stop: async () => {} };
  let running = true;
  let expected = '';
  const sender = conn.open_sender({ target: { address: 'tcp.healthy' } });
  const receiver = conn.open_receiver({ source: { address: 'tcp.healthy' }, credit_window: 10 });
  const sendNext = (): void => {
    if (!running || !sender.sendable()) return;
    expected = `healthy-${h.roundTrips}`;
    sender.send({ body: expected });
  };
  sender.once('sendable', sendNext);
  receiver.on('message', (ctx) => {
    if (ctx.message?.body !== expected)
      h.errors.push(new Error(`got ${String(ctx.message?.body)}, sent ${expected}`));
    h.roundTrips++;
    setImmediate(sendNext);
  });
  for (const ev of ['rejected', 'released', 'modified', 'sender_close', 'sender_error'] as const)
    sender.on(ev, () => h.errors.push(new Error(`healthy sender: ${ev}`)));
  for (const ev of ['receiver_close', 'receiver_error'] as const)
    receiver.on(ev, () => h.errors.push(new Error(`healthy receiver: ${ev}`)));
  conn.on('connection_error', (ctx) =>
    h.errors.push(
      new Error(`healthy connection error: ${JSON.stringify(ctx.connection?.error ?? ctx.error ?? '')}`),
    ),
  );
  conn.on('disconnected', () => {
    if (running) h.errors.push(new Error('healthy connection lost'));
  });
  h.stop = async () => {
    running = false;
    await closeConnection(conn);
  };
  return h;
}

// ---- the run ----

let broker: BrokerProcess;
let dataDir: string;
const SENTINEL = Array.from({ length: 20 }, (_, i) => `sentinel-${i}`);

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'quorate-fuzz-tcp-'));
  broker = await spawnBroker(['--port', '0', '--data-dir', dataDir, '--idle-timeout', String(IDLE_MS)]);
  const c = await rheaConnect({ port: broker.port });
  const outcomes = await sendAll(
    c,
    'tcp.sentinel',
    SENTINEL.map((body) => ({ body, message_id: body })),
  );
  expect(outcomes.map((o) => o.state)).toEqual(SENTINEL.map(() => 'accepted'));
  await closeConnection(c);
});

afterAll(async () => {
  if (broker && broker.child.exitCode === null) broker.child.kill('SIGKILL');
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe(`broker over TCP under hostile input (${CASES}+ cases, seed ${SEED})`, () => {
  it('every hostile connection is answered correctly and ended in bounded time; everyone else is unaffected', async () => {
    // generated first: a long synchronous stretch would starve the healthy connection's heartbeats
    const cases = generate();
    const before = await procMemory(broker.pid);
    const healthy = await startHealthy(broker.port);
    const started = Date.now();
    const failures: string[] = [];
    let slowest = 0;
    await pool(
      cases.map((c, i) => async () => {
        const r = await runTcpCase(broker.port, c.chunks, { gapMs: c.gapMs, boundMs: BOUND_MS });
        slowest = Math.max(slowest, r.ms);
        const problems = outputProblems(r.frames);
        if (!r.ended) problems.push(`socket still open after ${BOUND_MS} ms`);
        const errs = r.frames.flatMap((f) =>
          f.kind === 'amqp' && (f.performative.type === 'close' || f.performative.type === 'end')
            ? [{ type: f.performative.type, condition: f.performative.body.error?.condition }]
            : [],
        );
        const close = errs.find((e) => e.type === 'close')?.condition;
        const ends = errs.filter((e) => e.type === 'end').map((e) => e.condition);
        if (c.close && !c.close.includes(close ?? 'none'))
          problems.push(`closed with ${close}, expected ${c.close.join('|')}`);
        if (c.end && !(ends.length === 1 && c.end.includes(ends[0] ?? 'none')))
          problems.push(`ended sessions with ${JSON.stringify(ends)}, expected ${c.end.join('|')}`);
        if (problems.length > 0 && failures.length < 10)
          failures.push(`case ${i} (${c.name}): ${problems.join('; ')}`);
      }),
      CONCURRENCY,
    );
    const seconds = (Date.now() - started) / 1000;
    const roundTrips = healthy.roundTrips;
    await healthy.stop();
    const after = await procMemory(broker.pid);
    process.stdout.write(
      `${JSON.stringify({ fuzz: 'broker-tcp', cases: cases.length, seed: SEED, seconds, slowestCaseMs: slowest, healthyRoundTrips: roundTrips, rssBeforeMiB: before.rssKiB >> 10, rssAfterMiB: after.rssKiB >> 10, peakRssMiB: after.peakKiB >> 10 })}\n`,
    );
    expect(failures).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(Math.min(CASES, 2000));
    expect(broker.child.exitCode).toBeNull();
    expect(healthy.errors).toEqual([]);
    expect(roundTrips).toBeGreaterThan(10);
    // no allocation sized by wire values: the peak resident set stays within a fixed budget
    expect(after.peakKiB - before.rssKiB).toBeLessThan(256 * 1024);
    expect(broker.stderr.filter((l) => /uncaught|unhandled|internal error|handler failed/i.test(l))).toEqual(
      [],
    );
  }, 600_000);

  it('the queue of known messages is intact, and SIGTERM stops the broker cleanly', async () => {
    const c = await rheaConnect({ port: broker.port });
    const r = new TestReceiver(c, 'tcp.sentinel');
    const got = await r.next(SENTINEL.length);
    for (const m of got) m.delivery.accept();
    expect(got.map((m) => m.message.body)).toEqual(SENTINEL);
    // nothing else was in it
    expect(await r.drainFor(300)).toEqual([]);
    await closeConnection(c);
    broker.child.kill('SIGTERM');
    expect(await broker.exited).toBe(0);
  }, 60_000);
});
