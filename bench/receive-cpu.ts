/**
 * The client's receive CPU alone, ours against rhea's, on one broker at a time: each round sends
 * N x 1 KiB and receives them with credit `window`, each accepted, with rhea, our `for await` and
 * our `receive({ max })` in turn (the order rotates every round, so none always follows another),
 * and prints the median CPU time of this process per received message and rhea / ours, and how
 * often the process went to sleep waiting for the broker per message (its voluntary context
 * switches): a receive fed slowly wakes the client often, and on some machines each wake-up
 * costs far more CPU than the messages it brings, for both clients (docs/benchmarks.md#receive-cpu).
 *
 *   npm run bench -- receive-cpu [--target single|rabbitmq|proton|paced] [--messages N] [--window W]
 *        [--rounds R] [--only rhea|iterator|batch] [--profile file.cpuprofile] [--threads]
 *        [--pace R] [--tick-ms T]
 *
 * `--only` runs one client; `--profile` writes a V8 CPU profile of its measured receives (the
 * last round's); `--threads` prints each measured receive's msg/s, CPU per thread (main and
 * V8's workers, user and system), context switches and socket reads and writes per message
 * (bench/lib/thread-cpu.ts). CPU time, not wall time: on a shared machine it follows the client's own work;
 * the broker runs in another process, and the queue is filled before the measure starts. Each
 * client's receive starts after a full collection (the fill's garbage is no receive's) and ends
 * with one, counted (docs/benchmarks.md#phase-garbage).
 *
 * `--target paced` is no broker but a source of our own (bench/lib/paced-peer.ts, its own process)
 * that sends the same 1 KiB messages, unsettled, at `--pace R` msg/s (0 or absent: as fast as
 * credit allows) in one write every `--tick-ms T` ms (default 1): how the receive's cost per
 * message moves with the pace a broker feeds it at, the same for both clients.
 */
import rhea from 'rhea';
import {
  buildProtonBroker,
  type RunningBroker,
  startOurBroker,
  startPacedPeer,
  startProtonBroker,
  startRabbitBroker,
} from './lib/brokers.js';
import { loadQuorate } from './lib/built-package.js';
import { flagValue } from './lib/flag-value.js';
import { collectGarbage } from './lib/full-gc.js';
import { profiled } from './lib/profile.js';
import { receiveAccepting } from './lib/receive-loop.js';
import { formatThreadCost, type ThreadMark, threadCostSince, threadMark } from './lib/thread-cpu.js';

const { connect } = await loadQuorate();

const argv = process.argv.slice(2);
const value = (flag: string): string | undefined => flagValue(argv, flag);
const target = value('--target') ?? 'single';
const n = Number(value('--messages') ?? 20_000);
const window = Number(value('--window') ?? 1000);
const rounds = Number(value('--rounds') ?? 3);
const only = value('--only');
/** `--target paced`: the source's msg/s (0: as fast as credit allows) and how often it sends */
const pace = Number(value('--pace') ?? 0);
const tickMs = Number(value('--tick-ms') ?? 1);
/** write a V8 CPU profile of the measured receives (not the fills) to this file */
const profileFile = value('--profile');
/** print each receive's CPU per thread, its context switches and its socket reads and writes */
const showThreads = argv.includes('--threads');
// a loaded machine can stall the broker past the silence watch; nothing here fails over
const connectOptions = { reconnect: false, unresponsiveTimeoutMs: false } as const;

/** What one measured receive cost this process: CPU ms (user + system) and its sleeps. */
interface ReceiveCost {
  ms: number;
  wakeups: number;
  /** `--threads`: where the CPU went, per thread, and the socket's reads and writes */
  threads?: string;
}

/** Where a measure starts: CPU time and voluntary context switches so far. */
interface Mark {
  cpu: NodeJS.CpuUsage;
  switches: number;
  threads?: ThreadMark;
}

const mark = (): Mark => ({
  ...(showThreads ? { threads: threadMark() } : {}),
  cpu: process.cpuUsage(),
  switches: process.resourceUsage().voluntaryContextSwitches,
});

/** The cost since `from`. */
const costSince = (from: Mark, messages: number): ReceiveCost => {
  const d = process.cpuUsage(from.cpu);
  const threads = from.threads ? formatThreadCost(threadCostSince(from.threads, messages)) : undefined;
  return {
    ...(threads !== undefined ? { threads } : {}),
    ms: (d.user + d.system) / 1000,
    wakeups: process.resourceUsage().voluntaryContextSwitches - from.switches,
  };
};

/** Puts `count` x 1 KiB on `queue` (not measured). */
async function fill(url: URL, queue: string, count: number): Promise<void> {
  const conn = await connect({ urls: url.href, ...connectOptions });
  try {
    const sender = await conn.openSender(queue);
    const body = Buffer.alloc(1024, 0x61);
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const i = next++;
        const r = await sender.send({ body, messageId: `m-${i}` });
        if (r.state !== 'accepted') throw new Error(`send ${i}: ${r.state}`);
      }
    };
    await Promise.all(Array.from({ length: window }, worker));
    await sender.close();
  } finally {
    await conn.close();
  }
}

/** Receives `count` from `queue`, each accepted; returns what the receive alone cost. */
type Receive = (url: URL, queue: string, count: number) => Promise<ReceiveCost>;

const rheaReceive: Receive = (url, queue, count) =>
  new Promise((resolve, reject) => {
    const conn = rhea.create_container().connect({
      host: url.hostname,
      port: Number(url.port),
      reconnect: false,
      ...(url.username
        ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
        : {}),
    } as rhea.ConnectionOptions);
    conn.on('connection_error', (ctx) => reject(new Error(JSON.stringify(ctx.connection.error))));
    let got = 0;
    let c0: Mark | undefined;
    const receiver = conn.open_receiver({ source: queue, credit_window: window });
    receiver.on('receiver_open', () => {
      collectGarbage();
      c0 = mark();
    });
    receiver.on('message', () => {
      if (++got === count) {
        collectGarbage();
        const cost = costSince(c0!, count);
        conn.close();
        resolve(cost);
      }
    });
  });

const ourReceive =
  (mode: 'iterator' | 'batch'): Receive =>
  async (url, queue, count) => {
    const conn = await connect({ urls: url.href, ...connectOptions });
    try {
      const receiver = await conn.openReceiver(queue, { credit: window, confirmAccept: false });
      collectGarbage();
      const c0 = mark();
      await receiveAccepting(receiver, count, mode, window);
      collectGarbage();
      const cost = costSince(c0, count);
      await receiver.close();
      return cost;
    } finally {
      await conn.close();
    }
  };

const clients: Array<[string, Receive]> = (
  [
    ['rhea', rheaReceive],
    ['iterator', ourReceive('iterator')],
    ['batch', ourReceive('batch')],
  ] as Array<[string, Receive]>
).filter(([name]) => only === undefined || name === only);

async function start(): Promise<RunningBroker> {
  if (target === 'single') return startOurBroker(true);
  if (target === 'rabbitmq') return startRabbitBroker();
  if (target === 'proton') return startProtonBroker(buildProtonBroker());
  if (target === 'paced') return startPacedPeer(pace, tickMs);
  throw new Error(`--target ${target}: single, rabbitmq, proton or paced`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

/** Receive CPU per message (us) of each client on `--target`, every round and the median. */
export async function run(opts: { log?: (line: string) => void } = {}) {
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const broker = await start();
  try {
    const us: Record<string, number[]> = Object.fromEntries(clients.map(([name]) => [name, []]));
    const wakeups: Record<string, number[]> = Object.fromEntries(clients.map(([name]) => [name, []]));
    const once = async (name: string, receive: Receive, round: number, count: number) => {
      const queue = `rc-${name}-${round}-${Date.now()}`;
      if (target !== 'paced') await fill(broker.url, queue, count); // the paced source makes its own
      return round < 0
        ? receive(broker.url, queue, count)
        : profiled(profileFile, () => receive(broker.url, queue, count));
    };
    for (const [name, receive] of clients) await once(name, receive, -1, 2000);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < clients.length; k++) {
        const [name, receive] = clients[(k + r) % clients.length]!;
        const cost = await once(name, receive, r, n);
        if (cost.threads !== undefined)
          log(`  ${name} ${Math.round((cost.ms * 1e4) / n) / 10} us/msg: ${cost.threads}`);
        us[name]!.push(Math.round((cost.ms * 1000 * 10) / n) / 10);
        wakeups[name]!.push(Math.round((cost.wakeups * 1000) / n) / 1000);
      }
    }
    const label = target === 'paced' ? `paced ${pace > 0 ? `${pace} msg/s` : 'unpaced'}` : target;
    const rheaUs = median(us.rhea ?? []);
    const result: Record<string, { us: number[]; median: number; wakeupsPerMsg: number }> = {};
    for (const [name] of clients) {
      const m = median(us[name]!);
      const w = median(wakeups[name]!);
      const vs = rheaUs > 0 && name !== 'rhea' ? `, rhea / ours ${(rheaUs / m).toFixed(2)}x` : '';
      log(
        `${label} ${name}: receive CPU ${m} us/msg (${us[name]!.join(', ')})${vs}; wake-ups ${w}/msg (${wakeups[name]!.join(', ')})`,
      );
      result[name] = { us: us[name]!, median: m, wakeupsPerMsg: w };
    }
    return result;
  } finally {
    await broker.stop();
  }
}
