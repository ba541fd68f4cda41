/**
 * Failover bench (issue 6.8): time from `kill -9` of the member in use to the next accepted send,
 * p50 / p99 over `kills` kills (default 20), against a 3-member reference cluster; then the same
 * with rhea (its own reconnect plus a hand-written rotation over the members' URLs through
 * `connection_details`), counting what rhea lost. A producer keeps `window` sends in flight the
 * whole time; each kill waits until every member serves again (the supervisor restarts the
 * victim), then kills the member the client is connected to. At the end the queue is drained raw
 * (no receiver dedup) to count lost and duplicated messages: a copy counts as a duplicate only when
 * the queue held it twice (two arrivals on one drain connection; the queue's depth before the drain
 * is printed beside), not when the drain's own connection failed over and the broker offered again
 * what the drain had accepted without confirmation yet. With `--hang` each hang is followed by
 * what the client did (loss, attempts, failover), times from the SIGSTOP.
 *
 *   npx tsx bench/failover.ts [--kills 20] [--json]     or     npx tsx bench/run.ts failover
 *
 * Targets (ours): p50 <= 300 ms, p99 <= 800 ms, lost 0, duplicates 0.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import rhea from 'rhea';
import { type ClusterHandle, startCluster } from '../src/broker.js';
import { connect, type Delivery } from '../src/index.js';
import { failoverListFromOpenProperties } from '../src/wire-extensions.js';
import { waitClusterServing } from '../test/chaos/quorate-target.js';
import { type HealthyFailoverResult, healthyRun, portOf } from './lib/failover-healthy.js';

export interface FailoverBenchOptions {
  log?: (line: string) => void;
  /** kills per client. Default 20. */
  kills?: number;
  /** sends in flight. Default 16. */
  window?: number;
  /** which clients. Default both (with `hang`: ours only). */
  clients?: ('quorate' | 'rhea')[];
  /**
   * SIGSTOP the member in use instead of kill -9 (a hang: docs/failover.md#unresponsive), SIGCONT
   * it after the next accepted send; our client runs with default options. Targets: p50 <= 1 s,
   * max <= 2 s.
   */
  hang?: boolean;
  /**
   * Instead of kills: run this many seconds with every member healthy under load and count the
   * failovers (`npm run bench -- failover --healthy 60`); target: no 'unresponsive' one.
   */
  healthy?: number;
}

export interface ClientFailoverResult {
  client: string;
  kills: number;
  /** kill -9 to the next accepted send, ms, per kill (NaN: none within 30 s) */
  samplesMs: number[];
  /** per kill: was the victim the Raft leader (a new one must be elected first) */
  victimWasLeader: boolean[];
  /** p50 over the kills of a follower / of the leader */
  followerP50Ms: number;
  leaderP50Ms: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  attempted: number;
  accepted: number;
  /** sends that never got an outcome (rhea drops unsettled deliveries on disconnect) */
  unresolved: number;
  /** accepted sends missing from the queue */
  lostAcknowledged: number;
  /** sends the application made that never reached the queue */
  lost: number;
  /** extra copies found in the queue */
  duplicates: number;
  /** redeliveries to the drain after its own connection failed over (an artefact, not copies) */
  drainRedeliveries: number;
  /** failovers of the producer, and sends it re-sent in them (quorate only) */
  failovers?: number;
  resent?: number;
}

export interface FailoverBenchResult {
  nodes: number;
  results: ClientFailoverResult[];
  /** with `healthy`: the needless-failover count */
  healthy?: HealthyFailoverResult;
  targetsMet: boolean;
}

const KILL_TO_ACCEPT_TIMEOUT_MS = 30_000;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** What a client under test offers the kill loop. */
interface ClientUnderTest {
  name: string;
  /** AMQP port of the member the client is connected to now */
  currentPort(): number | undefined;
  /** resolves at the first send accepted after this call */
  nextAccept(): Promise<number>;
  /** what the client did since `since` (performance.now() ms), one line each, times relative to it */
  traceSince?(since: number): string[];
  stop(): Promise<{
    attempted: number;
    accepted: Set<string>;
    unresolved: number;
    sent: Set<string>;
    /** failovers the producer went through, and the sends it re-sent in them (quorate only) */
    failovers?: number;
    resent?: number;
  }>;
}

/** The member id every serving member names as leader in its Open (undefined: none agreed). */
async function leaderId(cluster: ClusterHandle): Promise<string | undefined> {
  const seen = new Set<string>();
  for (const m of cluster.members()) {
    try {
      const conn = await connect({ urls: [m.url], reconnect: false, timeoutMs: 3_000, idleTimeoutMs: 0 });
      const list = failoverListFromOpenProperties(conn.remoteOpen?.properties);
      await conn.close({ timeoutMs: 1_000 }).catch(() => undefined);
      const leader = list?.members.find((x) => x.leader === true);
      if (leader?.memberId) seen.add(leader.memberId);
    } catch {
      // not answering: no opinion
    }
  }
  return seen.size === 1 ? [...seen][0] : undefined;
}

async function killLoop(
  cluster: ClusterHandle,
  client: ClientUnderTest,
  kills: number,
  log: (l: string) => void,
  hang: boolean,
): Promise<{ samples: number[]; leader: boolean[] }> {
  const samples: number[] = [];
  const leader: boolean[] = [];
  for (let k = 0; k < kills; k++) {
    if (!(await waitClusterServing(cluster, 60_000)))
      log('  (cluster not fully serving after 60 s; killing anyway)');
    await client.nextAccept(); // steady state: the producer is getting answers
    // who leads, asked first: asking takes a while, and the client's member is read just before
    // the stop (it may have moved meanwhile)
    const leaderNow = await leaderId(cluster);
    const port = client.currentPort();
    const victim = cluster.members().find((m) => m.amqpPort === port);
    if (!victim) {
      k--;
      await sleep(50);
      continue;
    }
    const wasLeader = leaderNow === victim.id;
    const t0 = performance.now();
    if (hang) await cluster.pause(victim.id);
    else await cluster.kill(victim.id, { restart: true });
    // acks read before the process was gone do not count: wait for one after the kill
    const next = await Promise.race([
      client.nextAccept(),
      sleep(KILL_TO_ACCEPT_TIMEOUT_MS).then(() => Number.NaN),
    ]);
    const ms = next - t0;
    if (hang) await cluster.resume(victim.id);
    samples.push(ms);
    leader.push(wasLeader);
    log(
      `  ${client.name} ${hang ? 'hang' : 'kill'} ${k + 1}/${kills}: ${victim.id}${wasLeader ? ' (leader)' : ''} -> next accepted send after ${ms.toFixed(1)} ms`,
    );
    for (const line of client.traceSince?.(t0) ?? []) log(`      ${line}`);
  }
  return { samples, leader };
}

/** Our client: failover built in. */
async function quorateClient(
  urls: string[],
  queue: string,
  window: number,
  hang: boolean,
): Promise<ClientUnderTest> {
  // a hang is measured with the default options (the 10 s idle timeout is what it must not wait)
  const conn = await connect({
    urls,
    containerId: 'bench-failover-quorate',
    ...(hang ? {} : { idleTimeoutMs: 2_000 }),
  });
  const sender = await conn.openSender(queue);
  // what the client did, for the per-hang trace: [performance.now(), line]
  const trace: [number, string][] = [];
  let failovers = 0;
  let resent = 0;
  conn.on('reconnecting', (i) =>
    trace.push([
      performance.now(),
      `attempt ${i.attempt} -> ${portOf(i.url)}${i.error ? ` (previous: ${i.error.message.slice(0, 90)})` : ''}`,
    ]),
  );
  conn.on('failover', (f) => {
    failovers++;
    resent += f.resent;
    const at = performance.now();
    trace.push([at - f.durationMs, `connection to ${portOf(f.from)} lost: ${f.reason?.slice(0, 120)}`]);
    trace.push([
      at,
      `failover to ${portOf(f.to)} done in ${Math.round(f.durationMs)} ms, ${f.resent} re-sent`,
    ]);
  });
  const waiters: ((t: number) => void)[] = [];
  const accepted = new Set<string>();
  const sent = new Set<string>();
  let attempted = 0;
  let stopping = false;
  const loop = (async () => {
    const inflight = new Set<Promise<unknown>>();
    let n = 0;
    while (!stopping) {
      const id = `quorate-${++n}`;
      attempted++;
      sent.add(id);
      const p = sender
        .send({ messageId: id, durable: true, body: n }, { timeoutMs: 60_000 })
        .then((r) => {
          if (r.state !== 'accepted') return;
          accepted.add(id);
          const t = performance.now();
          for (const w of waiters.splice(0)) w(t);
        })
        .catch(() => undefined)
        .finally(() => inflight.delete(p));
      inflight.add(p);
      while (inflight.size >= window) await Promise.race(inflight);
    }
    await Promise.all(inflight);
  })();
  return {
    name: 'quorate',
    currentPort: () => (conn.url ? Number(new URL(conn.url).port) : undefined),
    nextAccept: () => new Promise((r) => waiters.push(r)),
    traceSince: (since) =>
      trace
        .splice(0)
        .filter(([t]) => t >= since - 1)
        .sort((a, b) => a[0] - b[0])
        .map(([t, line]) => `+${Math.round(t - since)} ms ${line}`),
    async stop() {
      stopping = true;
      await loop;
      await conn.close();
      return { attempted, accepted, unresolved: 0, sent, failovers, resent };
    },
  };
}

/** rhea: its reconnect, rotating over the members' ports by hand; unsettled sends die with the socket. */
async function rheaClient(ports: number[], queue: string, window: number): Promise<ClientUnderTest> {
  const container = rhea.create_container({ id: 'bench-failover-rhea' });
  let next = 0;
  let currentPort: number | undefined;
  let lastDialled: number | undefined;
  const conn = container.connect({
    connection_details: () => {
      lastDialled = ports[next++ % ports.length]!;
      return { port: lastDialled, host: '127.0.0.1' };
    },
    reconnect: true,
    initial_reconnect_delay: 20,
    max_reconnect_delay: 1_000,
    idle_time_out: 2_000,
  } as unknown as rhea.ConnectionOptions);
  const sender = conn.open_sender({ target: { address: queue } });
  const unsettled = new Map<rhea.Delivery, string>();
  const accepted = new Set<string>();
  const sent = new Set<string>();
  let unresolved = 0;
  let attempted = 0;
  const waiters: ((t: number) => void)[] = [];
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  conn.on('connection_open', () => {
    currentPort = lastDialled;
    poke();
  });
  conn.on('disconnected', () => {
    currentPort = undefined;
    // rhea forgets unsettled deliveries on disconnect: no outcome will ever come for them
    unresolved += unsettled.size;
    unsettled.clear();
    poke();
  });
  const settle = (ctx: rhea.EventContext, ok: boolean) => {
    const d = ctx.delivery;
    const id = d ? unsettled.get(d) : undefined;
    if (d) unsettled.delete(d);
    if (ok && id) {
      accepted.add(id);
      const t = performance.now();
      for (const w of waiters.splice(0)) w(t);
    }
    poke();
  };
  sender.on('accepted', (ctx) => settle(ctx, true));
  sender.on('rejected', (ctx) => settle(ctx, false));
  sender.on('released', (ctx) => settle(ctx, false));
  sender.on('modified', (ctx) => settle(ctx, false));
  sender.on('sendable', poke);
  await new Promise<void>((r) => sender.once('sendable', () => r()));
  let stopping = false;
  const loop = (async () => {
    let n = 0;
    while (!stopping) {
      if (currentPort === undefined || !sender.sendable() || unsettled.size >= window) {
        await Promise.race([new Promise<void>((r) => (wake = r)), sleep(50)]);
        continue;
      }
      const id = `rhea-${++n}`;
      attempted++;
      sent.add(id);
      const d = sender.send({ message_id: id, durable: true, body: n });
      unsettled.set(d, id);
    }
    const deadline = Date.now() + 10_000;
    while (unsettled.size > 0 && Date.now() < deadline) await sleep(20);
  })();
  return {
    name: 'rhea',
    currentPort: () => currentPort,
    nextAccept: () => new Promise((r) => waiters.push(r)),
    async stop() {
      stopping = true;
      await loop;
      unresolved += unsettled.size;
      conn.close();
      return { attempted, accepted, unresolved, sent };
    },
  };
}

/**
 * What the raw drain saw. A copy that arrives on the same drain connection as an earlier one is
 * a second message in the queue (the broker hands an acquired message to one link once); a copy
 * that arrives after the drain's own connection failed over may be the redelivery of one whose
 * accept was not yet confirmed when that connection died (docs/failover.md#receivers), which is
 * the drain's artefact, not a copy in the queue.
 */
interface DrainResult {
  /** message-id -> copies found in the queue */
  counts: Map<string, number>;
  /** deliveries after a failover of the drain's connection, of message-ids it had already seen */
  redelivered: number;
  /** failovers of the drain's own connection */
  drainFailovers: number;
}

/** The queue's depth as each serving member reports it (its replicated state). */
async function queueDepths(cluster: ClusterHandle, queue: string): Promise<number[]> {
  const depths: number[] = [];
  for (const url of cluster.httpUrls) {
    try {
      const res = await fetch(`${url}/api/queues`, { signal: AbortSignal.timeout(3_000) });
      const doc = (await res.json()) as { queues?: { name: string; messages: number }[] };
      const q = doc.queues?.find((x) => x.name === queue);
      if (q) depths.push(q.messages);
    } catch {
      // not answering: no figure
    }
  }
  return depths;
}

/** Drains `queue` raw (no receiver dedup), telling copies in the queue from its own redeliveries. */
async function drainRaw(urls: string[], queue: string, expect: Set<string>): Promise<DrainResult> {
  const conn = await connect({ urls, idleTimeoutMs: 2_000 });
  let drainFailovers = 0;
  conn.on('failover', () => drainFailovers++);
  const receiver = await conn.openReceiver(queue, { credit: 500, dedup: false });
  const counts = new Map<string, number>();
  /** the drain connection (failover count) each message-id was last seen on */
  const seenOn = new Map<string, number>();
  let redelivered = 0;
  let lastAt = Date.now();
  const done = (async () => {
    try {
      for await (const d of receiver as AsyncIterable<Delivery>) {
        const id = String(d.message.messageId);
        const epoch = drainFailovers;
        const before = seenOn.get(id);
        seenOn.set(id, epoch);
        if (before !== undefined && before < epoch) redelivered++;
        else counts.set(id, (counts.get(id) ?? 0) + 1);
        lastAt = Date.now();
        d.accept().catch(() => undefined);
      }
    } catch {
      // closed
    }
  })();
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const all = [...expect].every((id) => counts.has(id));
    if (all && Date.now() - lastAt > 2_000) break;
    await sleep(100);
  }
  await receiver.close().catch(() => undefined);
  await done;
  await conn.close();
  return { counts, redelivered, drainFailovers };
}

export async function run(opts: FailoverBenchOptions = {}): Promise<FailoverBenchResult> {
  const log = opts.log ?? ((l: string) => console.log(l));
  const kills = opts.kills ?? 20;
  const window = opts.window ?? 16;
  // `npm run bench -- failover --hang`: bench/run.ts passes no flags on, so read ours here
  const hang = opts.hang ?? process.argv.includes('--hang');
  const clients = opts.clients ?? (hang ? ['quorate'] : ['quorate', 'rhea']);
  const healthy = opts.healthy ?? secondsFlag(process.argv, '--healthy');
  if (healthy !== undefined) return healthyBench(healthy, window, log);
  log(
    `failover bench: 3-member reference cluster, ${kills} ${hang ? 'hangs (SIGSTOP)' : 'kills'} per client, ${window} sends in flight`,
  );
  const cluster = await startCluster({ nodes: 3, autoRestart: true });
  const results: ClientFailoverResult[] = [];
  try {
    if (!(await waitClusterServing(cluster, 60_000))) throw new Error('cluster did not serve within 60 s');
    for (const name of clients) {
      const queue = `bench-failover-${name}`;
      const client =
        name === 'quorate'
          ? await quorateClient(cluster.urls, queue, window, hang)
          : await rheaClient(
              cluster.members().map((m) => m.amqpPort),
              queue,
              window,
            );
      const { samples, leader } = await killLoop(cluster, client, kills, log, hang);
      const p50Of = (xs: number[]) =>
        Math.round(
          percentile(
            xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b),
            50,
          ) * 10,
        ) / 10;
      const end = await client.stop();
      await waitClusterServing(cluster, 60_000);
      const depths = await queueDepths(cluster, queue);
      const drain = await drainRaw(cluster.urls, queue, end.accepted);
      const counts = drain.counts;
      log(
        `  ${name} drain: queue depth before ${depths.join('/') || '?'} (per member), ${[...counts.values()].reduce((a, b) => a + b, 0)} copies of ${counts.size} ids; ${drain.redelivered} redeliveries after ${drain.drainFailovers} failovers of the drain (not counted); producer: ${end.failovers ?? '?'} failovers, ${end.resent ?? '?'} re-sent`,
      );
      const sorted = samples.filter((s) => Number.isFinite(s)).sort((a, b) => a - b);
      const missed = samples.length - sorted.length;
      const r: ClientFailoverResult = {
        client: name,
        kills: samples.length,
        samplesMs: samples.map((s) => Math.round(s * 10) / 10),
        victimWasLeader: leader,
        followerP50Ms: p50Of(samples.filter((_, i) => !leader[i])),
        leaderP50Ms: p50Of(samples.filter((_, i) => leader[i])),
        p50Ms: Math.round(percentile(sorted, 50) * 10) / 10,
        p99Ms: missed > 0 ? Number.POSITIVE_INFINITY : Math.round(percentile(sorted, 99) * 10) / 10,
        maxMs: missed > 0 ? Number.POSITIVE_INFINITY : Math.round((sorted.at(-1) ?? Number.NaN) * 10) / 10,
        attempted: end.attempted,
        accepted: end.accepted.size,
        unresolved: end.unresolved,
        lostAcknowledged: [...end.accepted].filter((id) => !counts.has(id)).length,
        lost: [...end.sent].filter((id) => !counts.has(id)).length,
        duplicates: [...counts.values()].reduce((n, c) => n + (c - 1), 0),
        drainRedeliveries: drain.redelivered,
        ...(end.failovers === undefined ? {} : { failovers: end.failovers, resent: end.resent ?? 0 }),
      };
      results.push(r);
      log(
        `${name}: p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, max ${r.maxMs} ms ` +
          `(p50 follower killed ${r.followerP50Ms} ms, leader killed ${r.leaderP50Ms} ms, ${leader.filter(Boolean).length} leader kills); attempted ${r.attempted}, accepted ${r.accepted}, ` +
          `no outcome ${r.unresolved}, lost ${r.lost} (acknowledged ${r.lostAcknowledged}), duplicates ${r.duplicates}`,
      );
    }
  } finally {
    await cluster.stop();
  }
  const ours = results.find((r) => r.client === 'quorate');
  const [p50Target, tailTarget, tailName] = hang ? [1_000, 2_000, 'max'] : [300, 800, 'p99'];
  const targetsMet =
    ours !== undefined &&
    ours.p50Ms <= p50Target &&
    (hang ? ours.maxMs : ours.p99Ms) <= tailTarget &&
    ours.lost === 0 &&
    ours.lostAcknowledged === 0 &&
    ours.duplicates === 0;
  log(
    `targets (ours: p50 <= ${p50Target} ms, ${tailName} <= ${tailTarget} ms, lost 0, duplicates 0): ${targetsMet ? 'met' : 'NOT met'}`,
  );
  return { nodes: 3, results, targetsMet };
}

/** `--healthy 60` (or `--healthy=60`) in argv: the seconds; undefined without the flag. */
function secondsFlag(argv: string[], flag: string): number | undefined {
  const i = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (i < 0) return undefined;
  const value = argv[i]!.includes('=') ? argv[i]!.split('=')[1] : argv[i + 1];
  const seconds = Number(value ?? 60);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new Error(`${flag} wants a number of seconds, got ${value}`);
  return seconds;
}

async function healthyBench(
  seconds: number,
  window: number,
  log: (l: string) => void,
): Promise<FailoverBenchResult> {
  log(`failover bench: 3-member reference cluster, healthy for ${seconds} s, ${window} sends in flight`);
  const cluster = await startCluster({ nodes: 3, autoRestart: true });
  try {
    if (!(await waitClusterServing(cluster, 60_000))) throw new Error('cluster did not serve within 60 s');
    const result = await healthyRun(cluster, seconds, window, log);
    const targetsMet = result.unresponsiveFailovers === 0;
    log(`target (no 'unresponsive' failover of a healthy member): ${targetsMet ? 'met' : 'NOT met'}`);
    return { nodes: 3, results: [], healthy: result, targetsMet };
  } finally {
    await cluster.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      kills: { type: 'string', default: '20' },
      hang: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      client: { type: 'string', multiple: true },
    },
  });
  const log = values.json ? (l: string) => console.error(l) : (l: string) => console.log(l);
  run({
    kills: Number(values.kills),
    hang: values.hang,
    log,
    clients: values.client as ('quorate' | 'rhea')[] | undefined,
  }).then(
    (r) => {
      if (values.json) console.log(JSON.stringify(r, null, 2));
      process.exit(r.targetsMet ? 0 : 1);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(2);
    },
  );
}
