/**
 * Hostile bytes through the broker's connection handler, in process (no sockets, fake clock):
 * random frames after a valid header, mutations of a valid conversation, size / count / depth
 * bombs, malformed frame headers and frames dribbled in slowly. Every case: no exception out of
 * the handler, output that decodes and respects Close/End ordering, no internal error, the
 * expected condition where the input determines it, and the connection ended within a bound of
 * fake time. Around the cases: a healthy peer keeps round-tripping messages, a sentinel queue of
 * known messages stays intact, and memory returns to its baseline.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Bomb,
  badHeader,
  countBomb,
  deepBomb,
  mutate,
  mutation,
  prefixFor,
  randomFrames,
  sizeBomb,
  stage,
  swap,
} from './arbitraries.js';
import { sentConditions } from './invariants.js';
import {
  afterCase,
  type FuzzContext,
  finishCase,
  IDLE_MS,
  setUpFuzz,
  share,
  tearDownFuzz,
} from './run-context.js';
import * as S from './script.js';

const seed = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) };
const LONG = 600_000;
let ctx: FuzzContext;

beforeAll(async () => {
  ctx = await setUpFuzz();
});

afterAll(async () => {
  if (ctx) await tearDownFuzz(ctx, 'broker-fuzz');
});

/** Splits `bytes` at the given cut points (taken modulo its length). */
function chunks(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
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
}

const cuts = fc.array(fc.nat(), { maxLength: 4 });

describe('broker connection handler under hostile input (in process)', () => {
  it(
    `random frames after a valid header, Open or Begin (${share(0.36)} cases)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          stage,
          fc.array(randomFrames, { minLength: 1, maxLength: 3 }),
          cuts,
          async (st, garbage, cut) => {
            const p = ctx.broker.peer();
            p.feed(prefixFor(st));
            for (const c of chunks(S.concat(garbage), cut)) p.feed(c);
            finishCase(p);
            await afterCase(ctx);
          },
        ),
        { numRuns: share(0.36), ...seed },
      );
    },
    LONG,
  );

  it(
    `mutated valid conversations: bit flips, truncations, size rewrites, frame swaps (${share(0.3)} cases)`,
    async () => {
      let q = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(mutation, { minLength: 1, maxLength: 3 }),
          fc.option(swap, { nil: undefined }),
          fc.integer({ min: 0, max: 3 }),
          async (muts, sw, messages) => {
            const queue = `fuzz.m${q++ % 16}`;
            const steps = S.validSession(queue, messages);
            const frames = steps.flat();
            if (sw) {
              const [a, b] = [sw[0] % frames.length, sw[1] % frames.length];
              [frames[a], frames[b]] = [frames[b]!, frames[a]!];
            }
            // keep the step boundaries (the broker answers between them), mutate the whole
            let bytes: Uint8Array = S.concat(frames);
            const bounds: number[] = [];
            let off = 0;
            for (const s of steps) {
              off += s.reduce((n, f) => n + f.length, 0);
              bounds.push(off);
            }
            for (const m of muts) bytes = mutate(bytes, m);
            const p = ctx.broker.peer();
            let prev = 0;
            for (const b of bounds) {
              const end = Math.min(b, bytes.length);
              if (end > prev) p.feed(bytes.subarray(prev, end));
              prev = Math.max(prev, end);
              await p.settle();
            }
            if (prev < bytes.length) p.feed(bytes.subarray(prev));
            finishCase(p);
            await afterCase(ctx);
          },
        ),
        { numRuns: share(0.3), ...seed },
      );
    },
    LONG,
  );

  const bombCase = async (st: 'open' | 'begin', bomb: Bomb, cut: number[]): Promise<void> => {
    const p = ctx.broker.peer();
    p.feed(prefixFor(st));
    for (const c of chunks(bomb.bytes, cut)) p.feed(c);
    finishCase(p);
    const close = sentConditions(p).close;
    if (!bomb.conditions.includes(close ?? 'none'))
      throw new Error(`${bomb.name}: closed with ${close}, expected one of ${bomb.conditions.join(', ')}`);
    await afterCase(ctx);
  };
  const afterOpen = fc.constantFrom('open' as const, 'begin' as const);

  it(
    `count bombs: lists, maps, arrays, binaries claiming up to 2^32 elements (${share(0.08)} cases)`,
    async () => {
      await fc.assert(fc.asyncProperty(afterOpen, countBomb, cuts, bombCase), {
        numRuns: share(0.08),
        ...seed,
      });
    },
    LONG,
  );

  it(
    `nesting bombs: lists, described values, arrays 65..3000 deep (${share(0.02)} cases)`,
    async () => {
      await fc.assert(fc.asyncProperty(afterOpen, deepBomb, cuts, bombCase), {
        numRuns: share(0.02),
        ...seed,
      });
    },
    LONG,
  );

  it(
    `size bombs: frame SIZE beyond the 1 MiB limit up to 4 GiB (${share(0.04)} cases)`,
    async () => {
      await fc.assert(fc.asyncProperty(afterOpen, sizeBomb, cuts, bombCase), {
        numRuns: share(0.04),
        ...seed,
      });
    },
    LONG,
  );

  it(
    `malformed frame headers: SIZE < 8, DOFF < 2, DOFF beyond SIZE (${share(0.03)} cases)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('open' as const, 'begin' as const), badHeader, cuts, bombCase),
        { numRuns: share(0.03), ...seed },
      );
    },
    LONG,
  );

  it(
    `frames over 512 bytes before the broker's Open: framing error (${share(0.01)} cases)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 513, max: 1024 * 1024 }), async (size) => {
          const p = ctx.broker.peer();
          p.feed(S.AMQP_HEADER);
          p.feed(
            Buffer.concat([
              Buffer.from([size >>> 24, (size >>> 16) & 255, (size >>> 8) & 255, size & 255, 2, 0, 0, 0]),
            ]),
          );
          finishCase(p);
          expect(sentConditions(p).close).toBe('amqp:connection:framing-error');
          await afterCase(ctx);
        }),
        { numRuns: share(0.01), ...seed },
      );
    },
    LONG,
  );

  it(
    `slow partial frames: bytes dribbled with the clock running are cut off by the idle timeout (${share(0.04)} cases)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('header' as const, 'open' as const, 'begin' as const),
          fc.integer({ min: 9, max: 512 }),
          fc.integer({ min: 1, max: 8 }),
          fc.integer({ min: 10, max: IDLE_MS - 1 }),
          async (st, size, perStep, stepMs) => {
            const p = ctx.broker.peer();
            p.feed(prefixFor(st));
            const head = Buffer.alloc(size);
            head.writeUInt32BE(size);
            head[4] = 2;
            // never complete: stop one byte short, each step within the idle timeout
            let at = 0;
            let fed = 0;
            while (!p.ended && at < size - 1 && fed < 400) {
              const next = Math.min(size - 1, at + perStep);
              p.feed(head.subarray(at, next));
              at = next;
              p.advance(stepMs);
              fed++;
            }
            finishCase(p);
            // before Open, the handshake deadline may fire first; both are resource limits
            expect(sentConditions(p).close).toBe('amqp:resource-limit-exceeded');
            await afterCase(ctx);
          },
        ),
        { numRuns: share(0.04), ...seed },
      );
    },
    LONG,
  );
});
