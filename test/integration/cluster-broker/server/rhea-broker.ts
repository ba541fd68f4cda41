/**
 * The brokers and rhea connection the broker-rhea-*.test.ts files share. Each file runs one set of
 * tests on every target (onEachTarget): the single node, and a follower of a 3-member cluster. A
 * member acquires a consumer's messages through the replicated log, asynchronously, and a follower
 * forwards them to the leader, so that is where link behaviour and the log's timing meet most.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type BrokerHandle, type ClusterHandle, startBroker } from '../../../../src/broker.js';
import type { QueuesDocument } from '../../../../src/cluster-broker/http/types.js';
import { startTestCluster, waitLeader } from '../../../cluster-broker/cluster/cluster-support.js';
import { closeConnection, connect, type RheaConnection } from '../../../cluster-broker/server/rhea-client.js';
import { getJson } from '../../../support/federation.js';
import { waitFor } from '../../../support/net.js';

export type TargetKind = 'single node' | 'cluster follower';

/** What the broker under test says of a queue: messages in it, and of those, the ones acquired. */
export interface QueueCounts {
  depth: number;
  acquired: number;
}

/** The broker a describe block's tests run against; its fields are set in beforeAll. */
export interface RheaTarget {
  readonly kind: TargetKind;
  /** The AMQP port of the broker (the follower) under test. */
  port: number;
  /** Its AMQP URL (for clients other than rhea). */
  url: string;
  /** A connection to it (a new one after the member closed the last, see targetIt). */
  conn: RheaConnection;
  /** What the broker under test says of `queue` now (undefined: it knows no such queue). */
  counts(queue: string): Promise<QueueCounts | undefined>;
}

let queueNo = 0;
/** A queue name not used before in this test file. */
export const fresh = (name: string) => `${name}-${++queueNo}`;

/** Broker settings a file needs, given to the single node and to every member alike. */
export interface TargetOptions {
  /** Every queue's delivery limit (queueDefaults.deliveryLimit; a member's --delivery-limit). */
  deliveryLimit?: number;
  /** How long a dynamic node outlives its lost connection (dynamicNodeGraceMs; --owner-grace-ms). */
  ownerGraceMs?: number;
}

/** Declares one test of a target's describe block (see onEachTarget). */
export type TargetTest = (name: string, body: () => Promise<void>) => void;

/**
 * Runs `tests` once per target, each in a describe block of its own that starts the broker (one
 * cluster per file) and connects before its tests, and closes and stops after them. Tests are
 * declared with the `it` given to `tests`: on the cluster it runs a test once more when the
 * member closed the connection with amqp:connection:forced while it ran (see targetIt).
 */
export function onEachTarget(
  title: string,
  tests: (t: RheaTarget, it: TargetTest) => void,
  options: TargetOptions = {},
): void {
  describe.each(['single node', 'cluster follower'] as const)(`${title} (%s)`, (kind) => {
    const target = useTarget(kind, options);
    tests(target.view, targetIt(target));
  });
}

interface TargetState {
  readonly view: RheaTarget;
  /** Why the member closed `view.conn` (undefined: it did not). */
  forced: { condition?: string; description?: string } | undefined;
  /** Connects `view.conn` again if it is closed (on the cluster once the member serves again). */
  reconnect(): Promise<void>;
}

/**
 * A member closes its connections with amqp:connection:forced when it stops serving (an
 * event-loop stall past its pause limit, a lost quorum) and a connection whose event's outcome
 * became unknown (a leader change): documented behaviour (docs/cluster-member.md) that a loaded
 * 2-core machine can bring about in any test. Such a test says nothing of the behaviour under
 * test, so it runs once more on a new connection (fresh queues); a second such close, or any
 * other failure, fails it. On the single node a test runs once.
 */
function targetIt(target: TargetState): TargetTest {
  return (name, body) =>
    it(
      name,
      async () => {
        await target.reconnect();
        target.forced = undefined;
        try {
          await body();
        } catch (err) {
          const forced = target.forced;
          if (target.view.kind !== 'cluster follower' || forced === undefined) throw err;
          process.stderr.write(
            `${name}: the member closed the connection (${JSON.stringify(forced)}); running it again\n`,
          );
          await target.reconnect();
          target.forced = undefined;
          await body();
        }
      },
      target.view.kind === 'cluster follower' ? 150_000 : undefined,
    );
}

function useTarget(kind: TargetKind, options: TargetOptions): TargetState {
  const { deliveryLimit, ownerGraceMs } = options;
  let stop: (() => Promise<void>) | undefined;
  let serving: () => Promise<void> = async () => undefined;
  const state: TargetState = {
    view: {
      kind,
      port: 0,
      url: '',
      conn: undefined as unknown as RheaConnection,
      counts: async () => undefined,
    },
    forced: undefined,
    reconnect: async () => {
      if (state.view.conn?.is_open()) return;
      await serving();
      const conn = await connect({ port: state.view.port });
      conn.on('connection_close', () => {
        const error = (conn as unknown as { error?: TargetState['forced'] }).error;
        if (error?.condition === 'amqp:connection:forced') state.forced = error;
      });
      state.view.conn = conn;
    },
  };
  const target = state.view;

  beforeAll(async () => {
    if (kind === 'single node') {
      const broker: BrokerHandle = await startBroker({
        port: 0,
        queueDefaults: deliveryLimit === undefined ? {} : { deliveryLimit },
        ...(ownerGraceMs === undefined ? {} : { dynamicNodeGraceMs: ownerGraceMs }),
      });
      stop = () => broker.stop();
      target.port = broker.port;
      target.url = broker.url;
      target.counts = async (queue) => {
        const q = broker.stats().queues.find((x) => x.name === queue);
        return q && { depth: q.depth, acquired: q.acquired };
      };
    } else {
      const handle: ClusterHandle = await startTestCluster({
        memberArgs: [
          ...(deliveryLimit === undefined ? [] : ['--delivery-limit', String(deliveryLimit)]),
          ...(ownerGraceMs === undefined ? [] : ['--owner-grace-ms', String(ownerGraceMs)]),
        ],
      });
      stop = () => handle.stop();
      const leader = await waitLeader(handle);
      const follower = handle.members().find((m) => m.id !== leader)!;
      target.port = follower.amqpPort;
      target.url = follower.url;
      target.counts = (queue) => memberCounts(Number(new URL(follower.httpUrl!).port), queue);
      serving = () => handle.waitServing(follower.id, 60_000);
    }
    await state.reconnect();
  });

  afterAll(async () => {
    if (target.conn) await closeConnection(target.conn);
    await stop?.();
  });

  return state;
}

/** A member's counts from its `/api/queues` (its applied state: the same rows as broker.stats()). */
async function memberCounts(httpPort: number, queue: string): Promise<QueueCounts | undefined> {
  const row = (await getJson<QueuesDocument>(httpPort, '/api/queues')).queues.find((q) => q.name === queue);
  return row && { depth: row.messages, acquired: row.unacknowledged };
}

/**
 * Waits until the broker under test says `queue` has `want` (fields left out are not checked): a
 * member's counts are those of the log entries it has applied, which may trail what a client was
 * already told.
 */
export async function waitCounts(
  t: RheaTarget,
  queue: string,
  want: Partial<QueueCounts>,
  timeoutMs = 15_000,
): Promise<void> {
  let last: QueueCounts | undefined;
  await waitFor(
    async () => {
      last = await t.counts(queue);
      return Object.entries(want).every(([k, v]) => last?.[k as keyof QueueCounts] === v);
    },
    {
      timeoutMs,
      what: `${queue} at ${JSON.stringify(want)}`,
      describe: () => `last seen ${JSON.stringify(last)}`,
      intervalMs: 20,
    },
  );
}
