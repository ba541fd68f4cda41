/**
 * Queue federation between two clusters (issue #12's federation target: the link moves messages
 * at least half as fast as a local send). Two 3-member reference clusters on this machine, east
 * (upstream) and west (downstream, federating east's `bench-fed` queue), each run by
 * `quorate-broker cluster` in its own process (startCluster()'s loopback proxies would carry both
 * clusters' replication in this, the clients', process), our client:
 * - local: one client sends N messages to west's `bench-local` while a consumer on west receives
 *   and accepts them;
 * - federated: one client sends N messages to east's `bench-fed` while a consumer on west (and
 *   none on east) receives and accepts them: every message crosses the link (commit on west,
 *   then accept on east; docs/federation.md#exactly-once).
 * Every client connects to the member leading its cluster as the round starts (benchEndpoint, as
 * the e2e bench), for both rounds, and the output names it: a client on a follower adds that
 * follower's forwarding to the leader, and which member a cluster's first URL reaches is chance.
 * Both keep `window` sends in flight and give the consumer credit `window`; the figure is
 * messages received per second, from the first send to the last delivery, and the ratio
 * federated / local. `--preload` also times the link alone: N messages already on east, then a
 * consumer attaches on west.
 *
 * Broker CPU (issue #34: federation at most 2x a local send's): the CPU per moved message of all
 * six members in the federated round, over the CPU per message of west's three members in the
 * local round. West's alone is the fair denominator: a local send there is done by west's members,
 * while east's sit idle (their heartbeats are not a send's cost). A moved message is a send on
 * east, a delivery from east to the link and a send on west by the link, then the same delivery
 * to the consumer on west: two sends and their deliveries, hence the 2x.
 *
 * Idle CPU: after the warm-up, every member's CPU is read over IDLE_MS with no traffic. What a
 * member spends whatever the traffic is counted in a round's CPU per message in proportion to
 * the round's length, so a slower round (the federated one) carries more of it per message; the
 * ratio is also printed with each round's share of it taken out (the target is the plain ratio).
 *
 * `--profile [DIR]` runs every member with --cpu-prof (DIR/east, DIR/west; one .cpuprofile per
 * member process, named by pid, printed with its role): the link runs on west's leader. Each
 * measured round's start and end are printed on the monotonic clock (microseconds), the clock of
 * the profiles' `startTime` and sample times, so a profile can be cut into its rounds.
 *
 * `--control` adds a control round after the federated one (bench/lib/federation-control.ts):
 * west's local round and an equal, independent local round on east (its own sender and consumer
 * on east's `bench-local`, no federation) at the same time, both from this process. Six members
 * and the client are then as busy as in the federated round, with none of the link's work: west's
 * CPU per message there, against the plain local round and the federated one, says how much of
 * the federated round's cost is the machine (contention, each cluster at a lower rate) and how
 * much is federation's own. Each cluster's members are counted per message of their own cluster;
 * the client's figure is per west message and covers both flows.
 *
 * `--repeat N` (default 1): the measured rounds (local, federated, then the preloaded one with
 * `--preload`) N times on the same clusters, after the one warm-up, in that order each time; each
 * repeat's lines are printed as one run's, then a line per target figure with its median and range
 * over the repeats, each repeat's own ratio counted. The result's figures (rates, ratios) are then
 * those medians, its per-process and per-cluster breakdowns (`cpuUs`, `logEntries`, `fsyncs`,
 * `clients`) the first repeat's, and `repeats` holds every repeat's figures.
 *
 *   npx tsx bench/run.ts federation [--messages N] [--window W] [--warm N] [--preload] [--profile [DIR]]
 *     [--repeat N] [--control]
 *
 * The result's types, the CPU ratios and the printed lines: bench/lib/federation-figures.ts; what
 * is read from the members' monitoring endpoints: bench/lib/federation-monitor.ts; the rounds and
 * where their clients connect: bench/lib/federation-rounds.ts.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../test/support/net.js';
import { type RunningBroker, startOurCluster } from './lib/brokers.js';
import { type ControlFigures, controlFigures, medianControlRatios } from './lib/federation-control.js';
import {
  brokerCpuOf,
  clusterIdle,
  type FederationBenchResult,
  type FederationRepeat,
  type IdleCpu,
  idleShares,
  logRepeat,
  type Round,
} from './lib/federation-figures.js';
import { anyLinkRunning, commitIndexOf, fsyncsOf, linkUpstreamMember } from './lib/federation-monitor.js';
import {
  controlRound,
  FED,
  federationProcesses,
  leaderEndpoint,
  preloadedRound,
  round,
} from './lib/federation-rounds.js';
import { flagValue } from './lib/flag-value.js';
import { idleCpuMsPerSecond, measureCpu } from './lib/process-cpu.js';
import { formatSpread, parseRepeat, spread } from './lib/repeats.js';
import { defaultWarm, parseWarm } from './lib/warm-option.js';

export type { FederationBenchResult, FederationRepeat };

export interface FederationBenchOptions {
  log?: (line: string) => void;
  /** Messages per measured round. Default 10_000. */
  messages?: number;
  /** Sends in flight, and the consumer's credit. Default 200. */
  window?: number;
  /** Messages of each warm-up round (local, then federated). Default a tenth of `messages`, at least 100. */
  warm?: number;
  /** Also time the link draining N messages that wait on east. Default false. */
  preload?: boolean;
  /** Directory for the members' CPU profiles (DIR/east, DIR/west); undefined: no profiling. */
  profileDir?: string;
  /** Times the measured rounds run, after the one warm-up. Default 1. */
  repeat?: number;
  /** Also run the control round (local sends on west and on east at once). Default false. */
  control?: boolean;
}

/** How long the members' idle CPU is read for, after the warm-up (ms). */
const IDLE_MS = 3_000;

function argsFromCommandLine(argv: string[]): Partial<FederationBenchOptions> {
  const value = (flag: string) => flagValue(argv, flag);
  const opts: Partial<FederationBenchOptions> = {};
  const m = value('--messages');
  if (m !== undefined) opts.messages = Number(m);
  const w = value('--window');
  if (w !== undefined) opts.window = Number(w);
  if (argv.includes('--preload')) opts.preload = true;
  if (argv.includes('--control')) opts.control = true;
  const warm = parseWarm(value('--warm'));
  if (warm !== undefined) opts.warm = warm;
  const repeat = parseRepeat(value('--repeat'));
  if (repeat !== undefined) opts.repeat = repeat;
  const p = argv.indexOf('--profile');
  if (p >= 0) {
    const dir = argv[p + 1];
    opts.profileDir =
      dir !== undefined && !dir.startsWith('--') ? dir : mkdtempSync(join(tmpdir(), 'quorate-fed-prof-'));
  }
  return opts;
}

export async function run(opts: FederationBenchOptions = {}): Promise<FederationBenchResult> {
  const cli = argsFromCommandLine(process.argv.slice(2));
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const n = opts.messages ?? cli.messages ?? 10_000;
  const window = opts.window ?? cli.window ?? 200;
  const preload = opts.preload ?? cli.preload ?? false;
  const profileDir = opts.profileDir ?? cli.profileDir;
  const profileArgs = (cluster: string): string[] => {
    if (profileDir === undefined) return [];
    mkdirSync(join(profileDir, cluster), { recursive: true });
    return ['--cpu-prof', '--cpu-prof-dir', join(profileDir, cluster)];
  };
  const repeat = opts.repeat ?? cli.repeat ?? 1;
  const control = opts.control ?? cli.control ?? false;
  const body = Buffer.alloc(1024, 0x61);
  const clusters: RunningBroker[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'quorate-fed-bench-'));
  const repeats: FederationRepeat[] = [];
  let idleCpu: IdleCpu = { east: null, west: null };
  try {
    const east = await startOurCluster(profileArgs('east'), ['--cluster-id', 'east']);
    clusters.push(east);
    const federationFile = join(dir, 'federation.json');
    await writeFile(
      federationFile,
      JSON.stringify({ upstreams: [{ name: 'east', urls: east.urls, queues: [FED] }] }),
    );
    const west = await startOurCluster(profileArgs('west'), [
      '--cluster-id',
      'west',
      '--federation',
      federationFile,
    ]);
    clusters.push(west);
    await waitFor(() => anyLinkRunning(west.httpUrls), {
      timeoutMs: 60_000,
      what: "west's federation link running",
      intervalMs: 200,
    });
    // every client on the member leading its cluster, read again before each round (a leader
    // change moves the clients with it)
    let eastAt = await leaderEndpoint(east);
    let westAt = await leaderEndpoint(west);
    // warm-up (JIT, link and queue paths, the members' memory)
    const warm = opts.warm ?? cli.warm ?? defaultWarm(n);
    await round(westAt.urls, westAt.urls, 'bench-local', warm, window, body, 'wl');
    await round(eastAt.urls, westAt.urls, FED, warm, window, body, 'wf');
    if (control)
      await controlRound({ east: eastAt.urls, west: westAt.urls }, { n: warm, window, body, tag: 'wc' });
    const idle = await idleCpuMsPerSecond(await federationProcesses(east.members, west.members), IDLE_MS);
    idleCpu = { east: clusterIdle(idle, 'east '), west: clusterIdle(idle, 'west ') };
    for (let r = 1; r <= repeat; r++) {
      // message ids unique to the repeat: the queues drop a message id they already took
      const id = (tag: string) => (r === 1 ? tag : `${tag}${r}`);
      const cpuUs: FederationRepeat['cpuUs'] = { local: {}, federated: {} };
      const logEntries: FederationRepeat['logEntries'] = {
        local: { east: null, west: null },
        federated: { east: null, west: null },
      };
      const fsyncs: FederationRepeat['fsyncs'] = {
        local: { east: null, west: null },
        federated: { east: null, west: null },
      };
      /** Which member each round's clients were on (printed with the figures). */
      const placement: FederationRepeat['clients'] = {};
      const seconds: FederationRepeat['seconds'] = { local: 0, federated: 0 };
      const measured = async <T>(what: Round, fn: () => Promise<T>): Promise<T> => {
        const processes = await federationProcesses(east.members, west.members);
        if (profileDir !== undefined)
          log(
            `${what} round, profiled members: ${processes.map((p) => `${p.label} pid ${p.pid ?? process.pid}`).join(', ')}`,
          );
        const counters = () =>
          Promise.all([
            commitIndexOf(east.httpUrls),
            commitIndexOf(west.httpUrls),
            fsyncsOf(east.httpUrls),
            fsyncsOf(west.httpUrls),
          ]);
        const before = await counters();
        const start = performance.now();
        const clockStart = process.hrtime.bigint() / 1000n;
        const m = await measureCpu(processes, n, fn);
        seconds[what] = (performance.now() - start) / 1000;
        // the members' profiles time their samples on the same monotonic clock (microseconds)
        if (profileDir !== undefined)
          log(`${what} round ran ${clockStart}-${process.hrtime.bigint() / 1000n} us on the monotonic clock`);
        const after = await counters();
        cpuUs[what] = Object.fromEntries(m.cpuUs);
        const perMessage = (i: number) => {
          const [b, a] = [before[i], after[i]];
          return b === null || b === undefined || a === null || a === undefined
            ? null
            : Math.round(((a - b) / n) * 1000) / 1000;
        };
        logEntries[what] = { east: perMessage(0), west: perMessage(1) };
        fsyncs[what] = { east: perMessage(2), west: perMessage(3) };
        return m.value;
      };
      westAt = await leaderEndpoint(west);
      placement.local = `sender and consumer on west ${westAt.label}`;
      const local = await measured('local', () =>
        round(westAt.urls, westAt.urls, 'bench-local', n, window, body, id('l')),
      );
      [eastAt, westAt] = await Promise.all([leaderEndpoint(east), leaderEndpoint(west)]);
      placement.federated = `sender on east ${eastAt.label}, consumer on west ${westAt.label}`;
      const federated = await measured('federated', () =>
        round(eastAt.urls, westAt.urls, FED, n, window, body, id('f')),
      );
      placement.link = await linkUpstreamMember(west.httpUrls, east.members);
      let controlled: FederationRepeat['control'];
      if (control) {
        [eastAt, westAt] = await Promise.all([leaderEndpoint(east), leaderEndpoint(west)]);
        placement.control = `sender and consumer on west ${westAt.label}, and on east ${eastAt.label}`;
        const rates = await measured('control', () =>
          controlRound({ east: eastAt.urls, west: westAt.urls }, { n, window, body, tag: id('c') }),
        );
        const figures = controlFigures({
          local: cpuUs.local,
          federated: cpuUs.federated,
          control: cpuUs.control ?? {},
        });
        controlled = { ...rates, figures };
      }
      // not measured for CPU: its round also fills east before the drain it times
      let preloaded: number | undefined;
      if (preload) {
        [eastAt, westAt] = await Promise.all([leaderEndpoint(east), leaderEndpoint(west)]);
        placement.preload = `sender on east ${eastAt.label}, consumer on west ${westAt.label}`;
        preloaded = await preloadedRound(eastAt.urls, westAt.urls, n, window, body, id('pre'));
      }
      repeats.push({
        localPerSec: local,
        federatedPerSec: federated,
        ratio: local > 0 ? Math.round((federated / local) * 100) / 100 : 0,
        brokerCpuRatio: brokerCpuOf(cpuUs).ratio,
        brokerCpuRatioNetOfIdle: idleShares(idleCpu, seconds, cpuUs, n).netRatio,
        seconds,
        logEntries,
        fsyncs,
        clients: placement,
        ...(preloaded !== undefined ? { preloadedLinkPerSec: preloaded } : {}),
        ...(controlled !== undefined ? { control: controlled } : {}),
        cpuUs,
      });
    }
  } finally {
    await Promise.all(clusters.map((c) => c.stop().catch(() => undefined)));
    await rm(dir, { recursive: true, force: true });
  }
  repeats.forEach((rep, i) => {
    if (repeat > 1) log(`repeat ${i + 1} of ${repeat}:`);
    logRepeat(log, rep, n, window, idleCpu);
  });
  const ratio = spread(repeats.map((rep) => rep.ratio));
  const brokerCpuRatio = spread(repeats.map((rep) => rep.brokerCpuRatio));
  const netOfIdle = spread(repeats.map((rep) => rep.brokerCpuRatioNetOfIdle));
  const localRate = spread(repeats.map((rep) => rep.localPerSec));
  const federatedRate = spread(repeats.map((rep) => rep.federatedPerSec));
  const preloadedRate = spread(repeats.map((rep) => rep.preloadedLinkPerSec ?? null));
  if (repeat > 1) {
    log(`ratio federated / local over ${repeat} repeats: median ${formatSpread(ratio, 2)} (target >= 0.5)`);
    log(
      `broker CPU per moved message / per local send over ${repeat} repeats: median ${formatSpread(brokerCpuRatio, 2)} (target <= 2)`,
    );
    log(
      `broker CPU per moved message / per local send, net of idle CPU, over ${repeat} repeats: median ${formatSpread(netOfIdle, 2)}`,
    );
  }
  const controls = repeats.flatMap((rep) => (rep.control === undefined ? [] : [rep.control.figures]));
  if (controls.length > 0 && repeat > 1) {
    const of = (pick: (f: ControlFigures) => number | null) => formatSpread(spread(controls.map(pick)), 2);
    log(
      `control over ${repeat} repeats: west's members per message, control / local median ${of((f) => f.westControlOverLocal)}, federated / control median ${of((f) => f.westFederatedOverControl)}`,
    );
    log(
      `control over ${repeat} repeats: two local sends side by side / one alone median ${of((f) => f.sideBySideRatio)}; moved message / two side by side median ${of((f) => f.federatedOverSideBySide)}`,
    );
  }
  if (profileDir !== undefined) log(`CPU profiles in ${profileDir}`);
  const first = repeats[0]!;
  // medians of two repeats are means: rounded as one repeat's figure is
  const rounded = (s: { median: number } | null, digits: number) =>
    s === null ? null : Math.round(s.median * 10 ** digits) / 10 ** digits;
  const preloadedMedian = rounded(preloadedRate, 0);
  return {
    messages: n,
    window,
    repeats,
    localPerSec: rounded(localRate, 0) ?? 0,
    federatedPerSec: rounded(federatedRate, 0) ?? 0,
    ratio: rounded(ratio, 2) ?? 0,
    brokerCpuRatio: rounded(brokerCpuRatio, 2),
    brokerCpuRatioNetOfIdle: rounded(netOfIdle, 2),
    idleCpuMsPerSec: idleCpu,
    logEntries: first.logEntries,
    fsyncs: first.fsyncs,
    clients: first.clients,
    ...(preloadedMedian !== null ? { preloadedLinkPerSec: preloadedMedian } : {}),
    ...(controls.length > 0 ? { controlRatios: medianControlRatios(controls) } : {}),
    cpuUs: first.cpuUs,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  run().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    },
  );
}
