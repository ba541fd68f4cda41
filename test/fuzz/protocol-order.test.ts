/**
 * Protocol-order violations through the broker's connection handler, in process, each with the
 * condition the spec names at the narrowest scope: frames on a channel nobody began, transfers
 * and flows on unattached handles, session window violations, transfers beyond link credit,
 * duplicate handles, oversized messages, frames after Close; and credit values that overflow
 * 32-bit arithmetic, which must simply work. Parameters (channels, handles, counts, credit
 * values, split points) are generated; the generic invariants of every fuzz case apply too.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSaslFrame } from '../../src/codec/index.js';
import type { Peer } from './harness.js';
import { sentConditions } from './invariants.js';
import {
  afterCase,
  type FuzzContext,
  finishCase,
  MAX_MESSAGE_SIZE,
  setUpFuzz,
  share,
  tearDownFuzz,
} from './run-context.js';
import * as S from './script.js';

const seed = process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) };
const LONG = 600_000;
const PUBLISHER_CREDIT = 16;
/** The broker's incoming session window (its Begin says so; read in beforeAll). */
let brokerWindow = 0;
let ctx: FuzzContext;

beforeAll(async () => {
  ctx = await setUpFuzz({ publisherCredit: PUBLISHER_CREDIT });
  const p = ctx.broker.peer();
  p.feed(S.concat(S.openedSession()));
  await p.settle();
  const begin = p.performatives().find((x) => x.p.type === 'begin');
  brokerWindow = begin?.p.type === 'begin' ? begin.p.body.incomingWindow : 0;
  expect(brokerWindow).toBeGreaterThan(0);
  finishCase(p);
});

afterAll(async () => {
  if (ctx) await tearDownFuzz(ctx, 'protocol-order');
});

/** Opens a session, then feeds `steps`, letting the broker answer after each. */
async function session(steps: Uint8Array[][]): Promise<Peer> {
  const p = ctx.broker.peer();
  p.feed(S.concat(S.openedSession()));
  await p.settle();
  for (const s of steps) {
    p.feed(S.concat(s));
    await p.settle();
  }
  return p;
}

const run = (fraction: number) => ({ numRuns: share(fraction), ...seed });
const channel = fc.integer({ min: 1, max: 255 });
const handle = fc.nat({ max: 1023 });
let n = 0;
const queue = () => `order.q${n++ % 8}`;

describe('protocol-order violations (in process)', () => {
  it(
    'a session frame on a channel nobody began closes the connection with amqp:illegal-state',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          channel,
          handle,
          fc.constantFrom('attach', 'flow', 'transfer', 'disposition', 'detach', 'end'),
          async (ch, h, kind) => {
            const f =
              kind === 'attach'
                ? S.attachSender(ch, h, 'q')
                : kind === 'flow'
                  ? S.flow(ch, h, 10)
                  : kind === 'transfer'
                    ? S.transfer(ch, h, 0, S.message('x'))
                    : kind === 'disposition'
                      ? S.accept(ch, 0, 0)
                      : kind === 'detach'
                        ? S.detach(ch, h)
                        : S.end(ch);
            const p = ctx.broker.peer();
            p.feed(S.concat([S.AMQP_HEADER, S.open(), f]));
            await p.settle();
            finishCase(p);
            expect(sentConditions(p).close).toBe('amqp:illegal-state');
            await afterCase(ctx);
          },
        ),
        run(0.02),
      );
    },
    LONG,
  );

  it(
    'a Begin on a channel above channel-max closes the connection with amqp:connection:framing-error',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 256, max: 0xffff }), async (ch) => {
          const p = ctx.broker.peer();
          p.feed(S.concat([S.AMQP_HEADER, S.open(), S.begin(ch)]));
          await p.settle();
          finishCase(p);
          expect(sentConditions(p).close).toBe('amqp:connection:framing-error');
          await afterCase(ctx);
        }),
        run(0.005),
      );
    },
    LONG,
  );

  it(
    'a transfer, flow or detach on an unattached handle ends the session with amqp:session:unattached-handle',
    async () => {
      await fc.assert(
        fc.asyncProperty(handle, fc.constantFrom('transfer', 'flow', 'detach'), async (h, kind) => {
          const f =
            kind === 'transfer'
              ? S.transfer(0, h, 0, S.message('x'))
              : kind === 'flow'
                ? S.flow(0, h, 5)
                : S.detach(0, h);
          const p = await session([[f]]);
          const c = sentConditions(p);
          expect(c.end).toEqual(['amqp:session:unattached-handle']);
          expect(c.close).toBeUndefined();
          finishCase(p);
          await afterCase(ctx);
        }),
        run(0.03),
      );
    },
    LONG,
  );

  it(
    'a second attach on a handle in use ends the session with amqp:session:handle-in-use, and nothing follows the End',
    async () => {
      await fc.assert(
        fc.asyncProperty(handle, fc.boolean(), fc.boolean(), async (h, firstIsSender, secondIsSender) => {
          const q = queue();
          const a1 = firstIsSender ? S.attachSender(0, h, q, 'a') : S.attachReceiver(0, h, q, 'a');
          const a2 = secondIsSender ? S.attachSender(0, h, q, 'b') : S.attachReceiver(0, h, q, 'b');
          const p = await session([[a1, a2]]);
          const c = sentConditions(p);
          expect(c.end).toEqual(['amqp:session:handle-in-use']);
          expect(c.close).toBeUndefined();
          // finishCase checks the order: no Attach (answer to the first) after the broker's End
          finishCase(p);
          await afterCase(ctx);
        }),
        run(0.03),
      );
    },
    LONG,
  );

  it(
    'transfers beyond link credit detach that link with amqp:link:transfer-limit-exceeded (session and connection stay)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          handle,
          fc.integer({ min: PUBLISHER_CREDIT + 1, max: PUBLISHER_CREDIT * 4 }),
          async (h, count) => {
            const transfers = Array.from({ length: count }, (_, i) =>
              S.transfer(0, h, i, S.message(`m${i}`)),
            );
            const p = await session([[S.attachSender(0, h, queue())], transfers]);
            const c = sentConditions(p);
            expect(c.detach).toEqual(['amqp:link:transfer-limit-exceeded']);
            expect(c.end).toEqual([]);
            expect(c.close).toBeUndefined();
            finishCase(p);
            await afterCase(ctx);
          },
        ),
        run(0.02),
      );
    },
    LONG,
  );

  it(
    "transfer frames beyond the broker's incoming window end the session with amqp:session:window-violation",
    async () => {
      // one delivery split into more frames than the window: only one credit, every frame a window slot
      await fc.assert(
        fc.asyncProperty(handle, fc.integer({ min: 1, max: 64 }), async (h, extra) => {
          const first = S.transfer(0, h, 0, Uint8Array.of(0x00), true);
          const more = S.frame(0, { type: 'transfer', body: { handle: h, more: true } }, Uint8Array.of(0x40));
          const frames = [first, ...Array.from({ length: brokerWindow + extra }, () => more)];
          const p = await session([[S.attachSender(0, h, queue())], frames]);
          const c = sentConditions(p);
          expect(c.end).toEqual(['amqp:session:window-violation']);
          expect(c.close).toBeUndefined();
          finishCase(p);
          await afterCase(ctx);
        }),
        run(0.003),
      );
    },
    LONG,
  );

  it(
    'a message over max-message-size detaches its link with amqp:link:message-size-exceeded',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          handle,
          fc.integer({ min: 1, max: 4096 }),
          fc.integer({ min: 2, max: 8 }),
          async (h, over, parts) => {
            const total = MAX_MESSAGE_SIZE + over;
            const part = Math.ceil(total / parts);
            const frames: Uint8Array[] = [];
            for (let at = 0, i = 0; at < total; at += part, i++) {
              const size = Math.min(part, total - at);
              const more = at + size < total;
              frames.push(
                i === 0
                  ? S.transfer(0, h, 0, Buffer.alloc(size), more)
                  : S.frame(0, { type: 'transfer', body: { handle: h, more } }, Buffer.alloc(size)),
              );
            }
            const p = await session([[S.attachSender(0, h, queue())], frames]);
            const c = sentConditions(p);
            expect(c.detach).toEqual(['amqp:link:message-size-exceeded']);
            expect(c.end).toEqual([]);
            finishCase(p);
            await afterCase(ctx);
          },
        ),
        run(0.005),
      );
    },
    LONG,
  );

  it(
    'credit and delivery-count values that wrap 32 bits: no error, never more than queued, all of it when the count is right',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 1023 }),
          fc.oneof(
            fc.constantFrom(0xffffffff, 0x80000000, 0x7fffffff),
            fc.integer({ min: 4, max: 0xffffffff }),
          ),
          fc.option(
            fc.oneof(fc.constantFrom(0xffffffff, 0x80000000, 0x7fffffff), fc.nat({ max: 0xffffffff })),
            {
              nil: undefined,
            },
          ),
          fc.integer({ min: 1, max: 3 }),
          async (h, credit, skew, count) => {
            const q = `credit.${h}.${n++}`;
            const sends = Array.from({ length: count }, (_, i) => S.transfer(0, 0, i, S.message(`c${i}`)));
            const p = await session([
              [S.attachSender(0, 0, q, 'in')],
              sends,
              [S.attachReceiver(0, h, q, 'out')],
            ]);
            const attach = p.performatives().find((x) => x.p.type === 'attach' && x.p.body.role === false);
            const initial = attach?.p.type === 'attach' ? (attach.p.body.initialDeliveryCount ?? 0) : 0;
            // right: the sender's delivery-count as its attach gave it; skewed: a peer's nonsense
            p.feed(S.flow(0, h, credit, (initial + (skew ?? 0)) >>> 0));
            await p.settle();
            await p.settle();
            const got = p.performatives().filter((x) => x.p.type === 'transfer').length;
            if (skew === undefined) expect(got).toBe(count);
            else expect(got).toBeLessThanOrEqual(count);
            expect(p.errors().filter((e) => e.error !== undefined)).toEqual([]);
            finishCase(p);
            await afterCase(ctx);
          },
        ),
        run(0.01),
      );
    },
    LONG,
  );

  it(
    'frames after the peer Close: the broker answers Close once and sends nothing more',
    async () => {
      const after = fc.constantFrom(
        () => S.begin(1),
        () => S.attachSender(0, 0, 'q'),
        () => S.flow(0, 0, 10),
        () => S.open(),
        () => S.close(),
        () => S.transfer(0, 0, 0, S.message('late')),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(after, { minLength: 1, maxLength: 4 }),
          fc.boolean(),
          async (frames, split) => {
            const late = S.concat(frames.map((f) => f()));
            const p = ctx.broker.peer();
            p.feed(S.concat([...S.openedSession(), S.close()]));
            if (split) await p.settle();
            p.feed(late);
            await p.settle();
            finishCase(p);
            const closes = p.performatives().filter((x) => x.p.type === 'close');
            expect(closes.length).toBe(1);
            await afterCase(ctx);
          },
        ),
        run(0.01),
      );
    },
    LONG,
  );

  it(
    'SASL out of order: AMQP frames before the outcome, unknown mechanisms, frames before the header',
    async () => {
      const cases = fc.constantFrom(
        () => [S.SASL_HEADER, S.open()],
        () => [S.SASL_HEADER, encodeSaslFrame({ type: 'sasl-init', body: { mechanism: 'CRAM-MD5' } })],
        () => [
          S.SASL_HEADER,
          encodeSaslFrame({ type: 'sasl-response', body: { response: new Uint8Array(4) } }),
        ],
        () => [S.SASL_HEADER, S.saslInit(), S.saslInit()],
        () => [S.open()],
        () => [S.AMQP_HEADER, S.saslInit()],
      );
      await fc.assert(
        fc.asyncProperty(cases, async (make) => {
          const p = ctx.broker.peer();
          p.feed(S.concat(make()));
          await p.settle();
          finishCase(p);
          // no session ever: the broker never sends a Begin or Attach here
          expect(p.performatives().filter((x) => x.p.type === 'begin' || x.p.type === 'attach')).toEqual([]);
          await afterCase(ctx);
        }),
        run(0.005),
      );
    },
    LONG,
  );
});
