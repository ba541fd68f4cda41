/**
 * Failover over WebSocket (docs/websocket.md#client), the reference cluster as processes: a
 * client given only ONE member's `ws://` URL learns the others' `quorate:ws-url` from the Open,
 * and keeps its promise while the member it uses is SIGKILLed twice: every send acknowledged,
 * each message handed to the application exactly once, `failover` events from ws:// to ws://.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../src/broker.js';
import { type Connection, type ConnectionEvents, connect, type Sender } from '../../../src/index.js';
import { waitClusterServing } from '../../chaos/quorate-target.js';
import { countDeliveries, sendWindowed } from '../../support/failover-load.js';
import { waitFor } from '../../support/net.js';

const PER_PHASE = 200;
const KILL_AFTER_ACKS = 80;
const WINDOW = 40;
const QUEUE = 'failover-ws';

let cluster: ClusterHandle;
const conns: Connection[] = [];

beforeAll(async () => {
  const { startCluster } = await import('../../../src/broker.js');
  cluster = await startCluster({ nodes: 3, wsBasePort: 0, autoRestart: false });
}, 120_000);

afterAll(async () => {
  for (const c of conns) await c.close({ timeoutMs: 2_000 }).catch(() => undefined);
  await cluster?.stop();
});

/** The member whose WebSocket URL `url` is. */
function memberOfWsUrl(url: string | undefined): string {
  const id = cluster.members().find((m) => m.wsUrl === url)?.id;
  if (id === undefined) throw new Error(`no member serves ${url}`);
  return id;
}

/**
 * Sends messages `from`..`from+PER_PHASE-1`; after KILL_AFTER_ACKS acknowledgements, SIGKILLs the
 * member `conn` uses. Resolves with the killed member and every send's outcome.
 */
async function phaseWithKill(
  conn: Connection,
  sender: Sender,
  from: number,
): Promise<{ victim: string; outcomes: PromiseSettledResult<{ state: string }>[] }> {
  const victim = memberOfWsUrl(conn.url);
  let acked = 0;
  let killed: Promise<void> | undefined;
  const outcomes = await sendWindowed(PER_PHASE, WINDOW, (i) => [
    sender
      .send({ messageId: `m-${from + i}`, durable: true, body: from + i }, { timeoutMs: 90_000 })
      .then((r) => {
        if (++acked === KILL_AFTER_ACKS) killed = cluster.kill(victim);
        return r;
      }),
  ]);
  await killed;
  return { victim, outcomes };
}

it('a client with one ws:// URL fails over across the members it learned, twice: nothing lost, nothing duplicated', async () => {
  const [firstWs] = cluster.wsUrls;
  expect(cluster.wsUrls).toHaveLength(3);
  const conn = await connect({
    urls: [firstWs!],
    containerId: 'failover-websocket-test',
    idleTimeoutMs: 2_000,
    timeoutMs: 30_000,
  });
  conns.push(conn);
  const failovers: ConnectionEvents['failover'][0][] = [];
  conn.on('failover', (e) => failovers.push(e));

  // it learned the other members' WebSocket endpoints from the Open, not their TCP ones
  const learned = new Set(conn.members);
  for (const ws of cluster.wsUrls) expect(learned).toContain(ws);
  for (const tcp of cluster.urls) expect(learned).not.toContain(tcp);

  const sender = await conn.openSender(QUEUE);
  const live = countDeliveries(await conn.openReceiver(QUEUE, { credit: 50 }));

  const outcomes: PromiseSettledResult<{ state: string }>[] = [];
  const victims: string[] = [];
  for (const phase of [0, 1]) {
    const r = await phaseWithKill(conn, sender, phase * PER_PHASE);
    outcomes.push(...r.outcomes);
    victims.push(r.victim);
    // back before the next kill, so two of three members always serve
    await cluster.restart(r.victim);
    expect(await waitClusterServing(cluster, 90_000)).toBe(true);
  }
  const total = 2 * PER_PHASE;

  expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
  for (const o of outcomes)
    expect((o as PromiseFulfilledResult<{ state: string }>).value.state).toBe('accepted');

  // two failovers at least (one per kill), each from and to a member's ws:// URL
  expect(failovers.length).toBeGreaterThanOrEqual(2);
  for (const f of failovers) {
    expect(cluster.wsUrls).toContain(f.from);
    expect(cluster.wsUrls).toContain(f.to);
    expect(f.to).not.toBe(f.from);
  }
  expect(new Set(victims).size).toBe(2); // the second kill hit the member the first failover chose
  expect(conn.url?.startsWith('ws://')).toBe(true);

  await waitFor(() => live.counts.size === total, {
    timeoutMs: 90_000,
    what: `all ${total} messages at the application`,
    intervalMs: 20,
  });
  expect([...live.counts.entries()].filter(([, n]) => n > 1)).toEqual([]);
}, 420_000);
