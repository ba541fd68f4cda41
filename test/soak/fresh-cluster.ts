/**
 * Fresh clusters under load (issue 30, "no stall on a fresh cluster"): starts pairs of brand-new
 * 3-member clusters exactly as the federation bench does (bench/federation.ts: east, and west
 * federating east's queue, each `quorate-broker cluster` in its own process, durable stores),
 * and puts the bench's load on them (sends with `--window` in flight to west and to east, a
 * consumer on west) until each cluster's first 30 s are over. For every cluster it counts
 * - leader changes: elections after the first one (from the members' `cluster: role` log lines),
 * - the longest commit hold: the longest time with sends in flight to that cluster and none of
 *   them accepted (a publisher's send is accepted once its message is committed and applied,
 *   docs/delivery-contract.md#commit-point), and the largest single send latency.
 * A round that ends early within a cluster's window (a send refused, a connection closed with
 * `outcome unknown`: what makes the bench's clients end early) is listed and counts as a failure.
 * A cluster's window runs from the spawn of its supervisor (its first election included) to
 * `--seconds` after the load starts (once both clusters serve and the federation link runs:
 * starting takes long on a busy machine). With `--verbose` the members log at debug (slow
 * writes, compactions, snapshots sent, stalls of their own) and a failing cluster's lines print.
 * Prints one line per cluster and then
 * `fresh clusters: N, leader changes: L, longest commit hold: H ms`; exits 1 when a cluster
 * changed leader or held a commit over 1 s (the promise: docs/cluster-member.md#fresh-start).
 *
 *   npx tsx test/soak/fresh-cluster.ts [--clusters 20] [--window 1000] [--seconds 30] [--verbose]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type RunningBroker, startOurCluster } from '../../bench/lib/brokers.js';
import { receiveAll, withFlow } from '../../bench/lib/quorate-flow.js';
import type { Sender } from '../../src/index.js';
import { waitFor } from '../support/net.js';

const FED = 'bench-fed';
const HOLD_LIMIT_MS = 1000;

interface ClusterWatch {
  name: string;
  /** When its supervisor was spawned (log lines are timed from here). */
  startedAt: number;
  /** Its first `--seconds` of service end here: set once every member serves (Infinity before). */
  windowEnd: number;
  /** term -> leader, from the members' role lines within the watched window. */
  leaders: Map<number, string>;
  /** Longest time with sends in flight and none accepted, ms. */
  longestHoldMs: number;
  /** When (ms after `startedAt`) the longest hold began. */
  longestHoldAt: number;
  /** Largest send -> accepted time, ms. */
  maxLatencyMs: number;
  sends: number;
  /** Rounds that ended early (a send refused, a connection closed by the cluster). */
  errors: string[];
  lines: string[];
}

function watch(name: string): ClusterWatch {
  return {
    name,
    startedAt: performance.now(),
    windowEnd: Number.POSITIVE_INFINITY,
    leaders: new Map(),
    longestHoldMs: 0,
    longestHoldAt: 0,
    maxLatencyMs: 0,
    sends: 0,
    errors: [],
    lines: [],
  };
}

/** `[n1] 2026-...Z INFO cluster: role {"member":"n1","role":"leader","term":2,"leader":"n1"}` */
function onLine(w: ClusterWatch, verbose: boolean) {
  return (line: string): void => {
    const now = performance.now();
    if (now > w.windowEnd) return;
    const at = now - w.startedAt;
    if (verbose) w.lines.push(`${w.name} +${Math.round(at)}ms ${line}`);
    if (!line.includes('cluster: role')) return;
    const json = line.slice(line.indexOf('{'));
    try {
      const v = JSON.parse(json) as { role?: string; term?: number; leader?: string | null };
      if (v.role === 'leader' && typeof v.term === 'number' && typeof v.leader === 'string')
        w.leaders.set(v.term, v.leader);
    } catch {
      // not a role line after all
    }
  };
}

/**
 * Sends `n` 1 KiB messages with `window` in flight (as bench/lib/quorate-flow.ts sendAll), timing
 * each until accepted; while in the cluster's watched window, notes its longest hold and latency.
 */
async function timedSendAll(
  sender: Sender,
  n: number,
  window: number,
  body: Buffer,
  tag: string,
  w: ClusterWatch,
): Promise<void> {
  let next = 0;
  let inFlight = 0;
  let lastProgress = performance.now();
  const note = (now: number, latency: number) => {
    if (now > w.windowEnd) return;
    w.maxLatencyMs = Math.max(w.maxLatencyMs, latency);
    if (now - lastProgress > w.longestHoldMs) {
      w.longestHoldMs = now - lastProgress;
      w.longestHoldAt = lastProgress - w.startedAt;
    }
  };
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const t0 = performance.now();
      if (inFlight++ === 0) lastProgress = t0;
      const r = await sender.send({ body, messageId: `${tag}-${i}` });
      const now = performance.now();
      inFlight--;
      note(now, now - t0);
      lastProgress = now;
      w.sends++;
      if (r.state !== 'accepted') throw new Error(`${w.name}: send ${tag}-${i}: ${r.state}`);
    }
  };
  // a hold still open when the window closes counts too
  const probe = setInterval(() => {
    if (inFlight > 0) note(performance.now(), 0);
  }, 50);
  try {
    await Promise.all(Array.from({ length: Math.max(1, window) }, worker));
  } finally {
    clearInterval(probe);
  }
}

interface Load {
  n: number;
  window: number;
  body: Buffer;
  tag: string;
}

/** One of the bench's rounds: `load.n` sends to `queue` on `send`, received on `receiveUrls`. */
async function round(
  send: { urls: string[]; watch: ClusterWatch },
  receiveUrls: string[],
  queue: string,
  { n, window, body, tag }: Load,
): Promise<void> {
  try {
    await withFlow(send.urls, receiveUrls, queue, window, (sender, receiver) =>
      Promise.all([receiveAll(receiver, n), timedSendAll(sender, n, window, body, tag, send.watch)]),
    );
  } catch (err) {
    // the bench would end here; the soak notes it (at the cluster sent to) and goes on
    const now = performance.now();
    const at = Math.round(now - send.watch.startedAt);
    if (now <= send.watch.windowEnd)
      send.watch.errors.push(`+${at}ms ${tag}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function anyLinkRunning(httpUrls: string[]): Promise<boolean> {
  for (const url of httpUrls) {
    try {
      const res = await fetch(new URL('/api/federation', url), { signal: AbortSignal.timeout(1_000) });
      const doc = (await res.json()) as { links: Array<{ state: string }> };
      if (doc.links.some((l) => l.state === 'running')) return true;
    } catch {
      // not answering yet
    }
  }
  return false;
}

/** One pair (east, west) started fresh and loaded for `windowMs`: their two watches. */
async function pair(
  index: number,
  opts: { window: number; messages: number; windowMs: number; verbose: boolean },
): Promise<ClusterWatch[]> {
  const { window, messages, windowMs, verbose } = opts;
  const body = Buffer.alloc(1024, 0x61);
  const dir = await mkdtemp(join(tmpdir(), 'quorate-fresh-soak-'));
  const clusters: RunningBroker[] = [];
  const eastWatch = watch(`east-${index}`);
  const westWatch = watch(`west-${index}`);
  try {
    const east = await startOurCluster([], ['--cluster-id', 'east'], {
      logLevel: verbose ? 'debug' : 'info',
      onLogLine: onLine(eastWatch, verbose),
    });
    clusters.push(east);
    const federationFile = join(dir, 'federation.json');
    await writeFile(
      federationFile,
      JSON.stringify({ upstreams: [{ name: 'east', urls: east.urls, queues: [FED] }] }),
    );
    westWatch.startedAt = performance.now();
    const west = await startOurCluster([], ['--cluster-id', 'west', '--federation', federationFile], {
      logLevel: verbose ? 'debug' : 'info',
      onLogLine: onLine(westWatch, verbose),
    });
    clusters.push(west);
    await waitFor(() => anyLinkRunning(west.httpUrls), {
      timeoutMs: 60_000,
      what: "west's federation link running",
      intervalMs: 200,
    });
    // each cluster is watched from its spawn until `--seconds` of load have passed: on a slow
    // machine starting west can take long enough that east's first seconds would see no load
    const loadEnd = performance.now() + windowMs;
    eastWatch.windowEnd = loadEnd;
    westWatch.windowEnd = loadEnd;
    const toWest = { urls: west.urls, watch: westWatch };
    const toEast = { urls: east.urls, watch: eastWatch };
    // the bench's sequence (warm-up, local, federated), repeated until both clusters' window is over
    let r = 0;
    const warm = Math.max(100, Math.floor(messages / 10));
    await round(toWest, west.urls, 'bench-local', { n: warm, window, body, tag: `wl${r}` });
    await round(toEast, west.urls, FED, { n: warm, window, body, tag: `wf${r}` });
    while (performance.now() < westWatch.windowEnd) {
      r++;
      await round(toWest, west.urls, 'bench-local', { n: messages, window, body, tag: `l${r}` });
      await round(toEast, west.urls, FED, { n: messages, window, body, tag: `f${r}` });
    }
  } finally {
    await Promise.all(clusters.map((c) => c.stop().catch(() => undefined)));
    await rm(dir, { recursive: true, force: true });
  }
  return [eastWatch, westWatch];
}

function leaderChanges(w: ClusterWatch): number {
  return Math.max(0, w.leaders.size - 1);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      clusters: { type: 'string', default: '20' },
      window: { type: 'string', default: '1000' },
      messages: { type: 'string', default: '10000' },
      seconds: { type: 'string', default: '30' },
      verbose: { type: 'boolean', default: false },
    },
  });
  const clusters = Number(values.clusters);
  const window = Number(values.window);
  const messages = Number(values.messages);
  const windowMs = Number(values.seconds) * 1000;
  const all: ClusterWatch[] = [];
  for (let i = 0; all.length < clusters; i++) {
    const watches = await pair(i, { window, messages, windowMs, verbose: values.verbose });
    for (const w of watches.slice(0, clusters - all.length)) {
      all.push(w);
      const leaders = [...w.leaders].map(([t, l]) => `${l}@${t}`).join(' ');
      process.stdout.write(
        `${w.name}: leaders ${leaders || '(none seen)'}, leader changes ${leaderChanges(w)}, ` +
          `longest commit hold ${Math.round(w.longestHoldMs)} ms (from +${Math.round(w.longestHoldAt)} ms), max send latency ${Math.round(w.maxLatencyMs)} ms, ` +
          `${w.sends} sends${w.errors.length > 0 ? `, rounds ended early: ${w.errors.join('; ')}` : ''}\n`,
      );
      const bad = leaderChanges(w) > 0 || w.longestHoldMs > HOLD_LIMIT_MS || w.errors.length > 0;
      if (values.verbose && bad) for (const l of w.lines) process.stdout.write(`  ${l}\n`);
    }
  }
  const changes = all.reduce((s, w) => s + leaderChanges(w), 0);
  const hold = Math.max(...all.map((w) => w.longestHoldMs));
  const endedEarly = all.reduce((s, w) => s + w.errors.length, 0);
  process.stdout.write(
    `fresh clusters: ${all.length}, leader changes: ${changes}, longest commit hold: ${Math.round(hold)} ms, ` +
      `rounds ended early: ${endedEarly}\n`,
  );
  return changes === 0 && hold <= HOLD_LIMIT_MS && endedEarly === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
