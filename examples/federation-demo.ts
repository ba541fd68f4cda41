/**
 * The federation demo (`npm run demo -- --federation`): two local 3-member clusters, `east`
 * (upstream) and `west` (downstream: it federates east's queue, docs/federation.md). Producers
 * send to east only; one consumer takes from east and one from west, which gets its messages
 * through the demand-driven federation link (`--consumers-on downstream`: west's only, so every
 * message crosses the link). Every few seconds a member is `kill -9`ed, sides
 * alternating: on east the member the producer uses, on west the member running the link (the
 * supervisor restarts it). It ends with the same table per cluster and for the whole: every
 * acknowledged message must have been received exactly once across both clusters, else it exits
 * non-zero.
 *
 * A message handed out again after its accept was in doubt (the member died before confirming
 * it) is at-least-once, not a duplicate, and counted apart; one handed out again after an accept
 * the broker confirmed is a duplicate. With consumers on both clusters, faults do duplicate
 * messages: one the link had committed on west but not yet accepted on east when a member died
 * is handed by east to its own consumer as well (test/chaos/README.md#federation).
 */
import { type Connection, connect, type Receiver } from 'quorate';
import { type ClusterHandle, startCluster } from 'quorate/broker';
import { everyMemberServes, formatGrid, memberAt } from './demo-cluster.js';
import { DemoProgress } from './demo-progress.js';

export interface FederationDemoOptions {
  durationMs: number;
  killEveryMs: number;
  nodes: number;
  window: number;
  holdMs: number;
  /** consumers on both clusters (the default), or on west only: every message crosses the link */
  consumersOn: 'both' | 'downstream';
}

const QUEUE = 'demo-orders';
type SideName = 'east' | 'west';

interface Side {
  name: SideName;
  cluster: ClusterHandle;
  /** distinct ids handed out here */
  received: Set<string>;
  duplicates: number;
  kills: number;
  failovers: number;
}

interface Tally {
  attempted: number;
  acknowledged: Set<string>;
  /** ids handed out, on either side */
  handedOut: Set<string>;
  /** ids whose accept a broker confirmed, and on which side */
  confirmed: Map<string, SideName>;
  /** duplicates whose confirmed accept was on the other cluster */
  crossDuplicates: number;
  /** handed out again after an accept in doubt */
  redeliveredInDoubt: number;
}

export async function runFederationDemo(o: FederationDemoOptions): Promise<number> {
  const progress = new DemoProgress(process.stdout, o.durationMs);
  progress.line(`starting two ${o.nodes}-member clusters: east, and west federating east's ${QUEUE}...`);
  const sides: Side[] = [];
  const conns: Connection[] = [];
  const tally: Tally = {
    attempted: 0,
    acknowledged: new Set(),
    handedOut: new Set(),
    confirmed: new Map(),
    crossDuplicates: 0,
    redeliveredInDoubt: 0,
  };
  const side = (name: SideName, cluster: ClusterHandle): Side => {
    const s = { name, cluster, received: new Set<string>(), duplicates: 0, kills: 0, failovers: 0 };
    sides.push(s);
    return s;
  };
  let stopOwnerPoll = (): void => undefined;
  try {
    const east = side('east', await startCluster({ nodes: o.nodes, autoRestart: true, clusterId: 'east' }));
    const west = side(
      'west',
      await startCluster({
        nodes: o.nodes,
        autoRestart: true,
        clusterId: 'west',
        federation: {
          upstreams: [{ name: 'east', urls: east.cluster.urls, queues: [QUEUE], reconnectDelayMs: 500 }],
        },
      }),
    );
    for (const s of sides)
      for (const m of s.cluster.members())
        progress.line(`  ${s.name}/${m.id}  ${m.url}  ${m.httpUrl}  pid ${m.pid}`);
    const owner = pollLinkOwner(west.cluster, (id) =>
      progress.line(`west: the federation link runs on ${id}`),
    );
    stopOwnerPoll = owner.stop;

    const open = async (s: Side, role: string): Promise<Connection> => {
      const conn = await connect({
        urls: s.cluster.urls,
        containerId: `federation-demo-${role}`,
        idleTimeoutMs: 2000,
      });
      conns.push(conn);
      conn.on('failover', (e) => {
        s.failovers++;
        progress.line(
          `${role}: failover ${e.from ?? '?'} -> ${e.to} in ${e.durationMs} ms (re-sent ${e.resent})`,
        );
      });
      return conn;
    };
    const producer = await open(east, 'producer');
    const sender = await producer.openSender(QUEUE);
    const consuming = sides.filter((s) => o.consumersOn === 'both' || s.name === 'west');
    const receivers = await Promise.all(
      consuming.map(async (s) => (await open(s, `${s.name}-consumer`)).openReceiver(QUEUE, { credit: 100 })),
    );
    const consumers = consuming.map((s, i) => consume(receivers[i]!, s, tally));

    const started = Date.now();
    const stopAt = started + o.durationMs;
    const victims: Record<SideName, () => string | undefined> = {
      east: () => memberAt(east.cluster, producer.url)?.id,
      west: owner.current,
    };
    const nemesis = killLoop(sides, victims, progress, stopAt, o.killEveryMs);
    const snapshot = () => ({
      elapsedMs: Date.now() - started,
      sent: tally.attempted,
      acknowledged: tally.acknowledged.size,
      received: union(sides).size,
      duplicates: sides.reduce((n, s) => n + s.duplicates, 0),
      kills: sides.reduce((n, s) => n + s.kills, 0),
      failovers: sides.reduce((n, s) => n + s.failovers, 0),
    });
    const ticker = setInterval(() => progress.update(snapshot()), 250);

    // the producer: `window` sends in flight, each message with its own stable id
    let seq = 0;
    const inflight = new Set<Promise<void>>();
    while (Date.now() < stopAt) {
      const id = `order-${++seq}`;
      tally.attempted++;
      const p = sender
        .send({ messageId: id, durable: true, body: { order: seq } }, { timeoutMs: 60_000 })
        .then((r) => {
          if (r.state === 'accepted') tally.acknowledged.add(id);
        })
        .catch(() => {
          // not acknowledged (deadline, or gave up): it does not count
        })
        .finally(() => inflight.delete(p));
      inflight.add(p);
      if (inflight.size >= o.window) await Promise.race(inflight);
    }
    await Promise.all(inflight);
    await nemesis;
    progress.line('producer done; draining both clusters...');
    // the link moves a backlog at its own pace: drain while messages keep arriving
    let lastCount = -1;
    let lastProgressAt = Date.now();
    while (missing(tally, sides) > 0 && Date.now() - lastProgressAt < 15_000) {
      const count = tally.handedOut.size;
      if (count !== lastCount) [lastCount, lastProgressAt] = [count, Date.now()];
      await new Promise((r) => setTimeout(r, 100));
    }
    clearInterval(ticker);
    await Promise.all(receivers.map((r) => r.close().catch(() => {})));
    await Promise.all(consumers);
    progress.update(snapshot());
    progress.done();
  } finally {
    stopOwnerPoll();
    await Promise.all(conns.map((c) => c.close().catch(() => {})));
    if (o.holdMs > 0) {
      progress.line(`holding both clusters ${o.holdMs / 1000} s (status pages at the URLs above)`);
      await new Promise((r) => setTimeout(r, o.holdMs));
    }
    await Promise.all(sides.map((s) => s.cluster.stop()));
  }
  return summarize(sides, tally);
}

/** Prints the table per cluster and for the whole; 0 when nothing was lost or duplicated. */
function summarize(sides: Side[], tally: Tally): number {
  const lost = missing(tally, sides);
  const duplicates = sides.reduce((n, s) => n + s.duplicates, 0);
  const rows: (number | string)[][] = sides.map((s) => {
    // the producers send to east only: what east acknowledged must arrive on one side or the other
    const acked = s.name === 'east' ? tally.acknowledged.size : 0;
    return [
      s.name,
      s.name === 'east' ? tally.attempted : 0,
      acked,
      s.received.size,
      s.name === 'east' ? lost : 0,
      s.duplicates,
      s.kills,
      s.failovers,
    ];
  });
  const whole = union(sides);
  rows.push([
    'whole',
    tally.attempted,
    tally.acknowledged.size,
    whole.size,
    lost,
    duplicates,
    sides.reduce((n, s) => n + s.kills, 0),
    sides.reduce((n, s) => n + s.failovers, 0),
  ]);
  const header = ['cluster', 'sent', 'acked', 'received', 'lost', 'duplicates', 'kills', 'failovers'];
  process.stdout.write(`\n${formatGrid(header, rows)}\n`);
  process.stdout.write(
    `duplicates whose first confirmed accept was on the other cluster: ${tally.crossDuplicates}\n` +
      `handed out again after an accept in doubt (at-least-once, not duplicates): ${tally.redeliveredInDoubt}\n`,
  );
  const ok = lost === 0 && duplicates === 0 && tally.acknowledged.size > 0;
  process.stdout.write(
    ok
      ? '\nOK: every acknowledged message received exactly once across both clusters.\n'
      : '\nFAILED: see the table above.\n',
  );
  return ok ? 0 : 1;
}

function union(sides: Side[]): Set<string> {
  const all = new Set<string>();
  for (const s of sides) for (const id of s.received) all.add(id);
  return all;
}

/** Acknowledged ids received on neither side. */
function missing(tally: Tally, sides: Side[]): number {
  let n = 0;
  for (const id of tally.acknowledged) if (!sides.some((s) => s.received.has(id))) n++;
  return n;
}

async function consume(receiver: Receiver, side: Side, tally: Tally): Promise<void> {
  const accepting = new Set<Promise<void>>();
  try {
    for await (const d of receiver) {
      const id = String(d.message.messageId);
      const acceptedOn = tally.confirmed.get(id);
      if (acceptedOn !== undefined) {
        side.duplicates++;
        if (acceptedOn !== side.name) tally.crossDuplicates++;
      } else if (tally.handedOut.has(id)) tally.redeliveredInDoubt++;
      tally.handedOut.add(id);
      side.received.add(id);
      const p: Promise<void> = d
        .accept()
        .then(() => {
          tally.confirmed.set(id, side.name);
        })
        .catch(() => {
          // in doubt: the message may be offered again, here or (through the link) on the other side
        })
        .finally(() => accepting.delete(p));
      accepting.add(p);
    }
  } catch {
    // the receiver was closed
  }
  await Promise.all(accepting);
}

/** Every 500 ms: which west member runs the link; `changed` on every new one. */
function pollLinkOwner(cluster: ClusterHandle, changed: (id: string) => void) {
  let owner: string | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    cluster
      .federation()
      .then((links) => {
        const now = links.find((l) => l.state === 'running')?.member;
        if (now !== undefined && now !== owner) changed(now);
        owner = now ?? owner;
      })
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, 500);
  return { current: () => owner, stop: () => clearInterval(timer) };
}

/** Every `everyMs`, sides alternating, once every member of that side serves: kill -9 its victim. */
async function killLoop(
  sides: Side[],
  victims: Record<SideName, () => string | undefined>,
  progress: DemoProgress,
  stopAt: number,
  everyMs: number,
): Promise<void> {
  const what: Record<SideName, string> = {
    east: 'the member the producer uses',
    west: 'the member running the federation link',
  };
  let next = Date.now() + everyMs;
  let turn = 0;
  while (Date.now() < stopAt - everyMs / 2) {
    await new Promise((r) => setTimeout(r, 100));
    if (Date.now() < next) continue;
    const s = sides[turn % sides.length]!;
    if (!(await everyMemberServes(s.cluster, QUEUE))) continue; // restarted members must have caught up
    const id = victims[s.name]();
    const victim = s.cluster.members().find((m) => m.id === id);
    if (!victim) continue;
    progress.line(`kill -9 ${s.name}/${victim.id} (pid ${victim.pid}), ${what[s.name]}`);
    await s.cluster.kill(victim.id, { restart: true });
    s.kills++;
    turn++;
    next = Date.now() + everyMs;
  }
}
