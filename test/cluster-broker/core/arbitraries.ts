import fc from 'fast-check';
import type { BrokerEvent, QueueOptions, SettleOutcome } from '../../../src/cluster-broker/core/events.js';

// 't' a topic, 's1' and 's2' its subscriptions (when declared so: see `timeless`)
const queues = ['a', 'b', 'a.dlq', 'dead', 't', 's1', 's2'];
const holders = ['p1', 'p2'];
const consumers = ['c/1', 'c/2', 'c/3'];

const options: fc.Arbitrary<QueueOptions> = fc.record(
  {
    maxMessages: fc.integer({ min: 1, max: 20 }),
    maxBytes: fc.integer({ min: 20, max: 400 }),
    deadLetterQueue: fc.constantFrom<string | null>('dead', null, 'a.dlq'),
    dedupWindowCount: fc.integer({ min: 0, max: 5 }),
    dedupWindowMs: fc.integer({ min: 0, max: 500 }),
    temporary: fc.constant({ owner: 'c/1', policy: 'delete-on-close' as const }),
    ownerUser: fc.constantFrom('alice', 'bob'),
    deliveryLimit: fc.integer({ min: 1, max: 3 }),
  },
  { requiredKeys: [] },
);

const outcome: fc.Arbitrary<SettleOutcome> = fc.oneof(
  fc.constant<SettleOutcome>({ type: 'accepted' }),
  fc.constant<SettleOutcome>({ type: 'released' }),
  fc.record(
    {
      type: fc.constant('rejected' as const),
      error: fc.option(
        fc.record(
          { condition: fc.constantFrom('x:a', 'x:b'), description: fc.string() },
          { requiredKeys: ['condition'] },
        ),
        { nil: undefined },
      ),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record(
    {
      type: fc.constant('modified' as const),
      deliveryFailed: fc.constant(true),
      undeliverableHere: fc.constant(true),
    },
    { requiredKeys: ['type'] },
  ),
);

const enqueueArb = fc.record(
  {
    type: fc.constant('enqueue' as const),
    queue: fc.constantFrom(...queues),
    message: fc.uint8Array({ maxLength: 24 }),
    dedupKey: fc.constantFrom('s:1', 's:2', 's:3', 'u:1'),
    expiresAt: fc.integer({ min: 0, max: 12_000 }),
    deliveryCount: fc.integer({ min: 0, max: 3 }),
  },
  { requiredKeys: ['type', 'queue', 'message'] },
);

const settleArb = fc.record(
  {
    type: fc.constant('settle' as const),
    consumer: fc.constantFrom(...consumers),
    seqs: fc.uniqueArray(fc.integer({ min: 1, max: 40 }), { maxLength: 3 }),
    outcome,
    link: fc.constantFrom('L1', 'L2'),
  },
  { requiredKeys: ['type', 'consumer', 'seqs', 'outcome'] },
);

/** An event without its leaderTime (added by `eventSequence`). */
type Timeless = BrokerEvent extends infer E ? (E extends BrokerEvent ? Omit<E, 'leaderTime'> : never) : never;

const timeless: fc.Arbitrary<Timeless> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('declare' as const),
      queue: fc.constantFrom(...queues),
      options,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('declare' as const),
      queue: fc.constant('t'),
      options: options.map((o): QueueOptions => ({ ...o, topic: true })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('declare' as const),
      queue: fc.constantFrom('s1', 's2'),
      options: options.map((o): QueueOptions => ({ ...o, subscription: { topic: 't' } })),
    }),
  },
  {
    weight: 1,
    // ifOwnerLostAt: the model test replaces an odd one with the queue's actual owner-lost time
    arbitrary: fc.record(
      {
        type: fc.constant('delete' as const),
        queue: fc.constantFrom(...queues),
        ifOwnerLostAt: fc.integer({ min: 0, max: 3 }),
      },
      { requiredKeys: ['type', 'queue'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant('purge' as const), queue: fc.constantFrom(...queues) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constantFrom('owner-attached' as const, 'owner-lost' as const),
      queue: fc.constantFrom(...queues),
      holder: fc.constantFrom(...holders),
    }),
  },
  { weight: 8, arbitrary: enqueueArb },
  {
    weight: 6,
    arbitrary: fc.record(
      {
        type: fc.constant('acquire' as const),
        queue: fc.constantFrom(...queues),
        consumer: fc.constantFrom(...consumers),
        max: fc.integer({ min: 1, max: 3 }),
        link: fc.constantFrom('L1', 'L2'),
        // a selector consumer's acquire of chosen messages (ascending)
        seqs: fc
          .uniqueArray(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 3 })
          .map((s) => s.sort((x, y) => x - y)),
      },
      { requiredKeys: ['type', 'queue', 'consumer'] },
    ),
  },
  { weight: 6, arbitrary: settleArb },
  {
    // a transaction's commit: its enqueues and settlements as one event
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('commit' as const),
      events: fc.array(
        fc.oneof(enqueueArb, settleArb).map((e) => ({ ...e, leaderTime: 0 })),
        { minLength: 1, maxLength: 4 },
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('release-consumer' as const),
      consumer: fc.constantFrom(...consumers),
    }),
  },
  {
    // a consumer asks that what it holds waits for its link when it goes away (ms 0: cancel)
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('hold-unsettled' as const),
      consumer: fc.constantFrom(...consumers),
      link: fc.constantFrom('L1', 'L2', 'c/1'),
      ms: fc.constantFrom(0, 100, 3000),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'release-all' as const }) },
  { weight: 2, arbitrary: fc.constant({ type: 'expire' as const }) },
);

/** Random event sequences; leader time mostly moves forward, sometimes back (a slower new leader). */
export const eventSequence: fc.Arbitrary<BrokerEvent[]> = fc
  .tuple(
    options,
    fc.array(fc.tuple(timeless, fc.integer({ min: -50, max: 200 })), {
      minLength: 20,
      maxLength: 150,
      size: 'max',
    }),
  )
  .map(([aOptions, items]) => {
    let t = 1_000;
    const start: BrokerEvent[] = [
      { type: 'declare', leaderTime: t, queue: 'a', options: aOptions },
      { type: 'declare', leaderTime: t, queue: 'b', options: {} },
    ];
    return start.concat(
      items.map(([e, dt]) => {
        t += dt;
        return { ...e, leaderTime: t } as BrokerEvent;
      }),
    );
  });

/** Random events including every optional field shape, for codec round trips. */
export const anyEvent: fc.Arbitrary<BrokerEvent> = fc
  .tuple(timeless, fc.oneof(fc.integer({ min: 0, max: 2 ** 45 }), fc.double({ noNaN: true })))
  .map(([e, t]) => ({ ...e, leaderTime: t }) as BrokerEvent);
