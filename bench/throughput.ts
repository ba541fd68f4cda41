/**
 * End-to-end throughput through our broker: send N messages (window 1000 unsettled, settled on
 * accept), then receive them (credit 1000, accepted as they arrive, rcv-settle-mode first).
 * Clients: rhea 3.0.5 and our own client (`connect` from src/index.ts), in the same run, with
 * ratios. The broker runs as its own process (the real CLI, durable store with fsync) so client
 * and broker do not share a core. Optional: the same against RabbitMQ (`rabbitUrl` /
 * RABBIT_URL) and against the Qpid Proton C example broker (`protonBroker` / PROTON_BROKER: path
 * of its binary, run as `BIN 127.0.0.1 PORT`).
 * Also: broker memory (heap + array buffers) per queued 1 KiB message, measured in process.
 * `scrape` / BENCH_SCRAPE=1: also the same broker serving its monitoring endpoints
 * (`--http-port`) while a scraper fetches /metrics, /api/overview, /api/queues,
 * /api/connections and /api/history once a second (Prometheus's and an open status page's
 * load), with the ratio to the broker without HTTP.
 *
 *   npx tsx bench/throughput.ts            or   npx tsx bench/run.ts throughput
 */
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import rhea from 'rhea';
import { startBroker } from '../src/broker.js';
import { startOurBroker, startProtonBroker } from './lib/brokers.js';
import { type BenchClient, quorateClient, rheaClient } from './lib/clients.js';
import { processCpuMs } from './lib/process-cpu.js';

export interface ThroughputOptions {
  log?: (line: string) => void;
  /** Messages per measurement. Default 20_000. */
  messages?: number;
  /** Body sizes in bytes. Default [100, 1024]. */
  sizes?: number[];
  /** Unsettled sends / receiver credit. Default 1000. */
  window?: number;
  rabbitUrl?: string;
  protonBroker?: string;
  /** Also measure our broker without a store (no fsync), as the Proton C example broker runs. Default: env BENCH_MEMORY_BROKER=1. */
  memoryBroker?: boolean;
  /** Also measure with the monitoring endpoints scraped every second. Default: env BENCH_SCRAPE=1. */
  scrape?: boolean;
  /** Messages queued for the memory figure. Default 20_000. */
  memoryMessages?: number;
}

export interface Measurement {
  target: string;
  client: string;
  size: number;
  messages: number;
  sendPerSec: number;
  receivePerSec: number;
  /** N / (send time + receive time). */
  endToEndPerSec: number;
  error?: string;
}

export interface ThroughputResult {
  /** With `scrape`: the broker CPU the monitoring endpoints cost. */
  monitoringCost?: MonitoringCost;
  measurements: Measurement[];
  ratios: Record<string, number>;
  memory: {
    messages: number;
    bytesPerMessage: number;
    heapPerMessage: number;
    arrayBuffersPerMessage: number;
  };
}

// ---------------------------------------------------------------- monitoring load

const SCRAPED_PATHS = ['/metrics', '/api/overview', '/api/queues', '/api/connections', '/api/history'];

async function scrapeOnce(base: string): Promise<void> {
  for (const path of SCRAPED_PATHS) {
    const res = await fetch(`${base}${path}`);
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    await res.arrayBuffer();
  }
}

/** The broker's CPU ms so far (bench/lib/process-cpu.ts); the bench needs /proc and the process. */
function brokerCpuMs(pid: number): number {
  const ms = processCpuMs(pid);
  if (ms === null) throw new Error(`cannot read the CPU time of process ${pid} from /proc`);
  return ms;
}

export interface MonitoringCost {
  rounds: number;
  cpuMsPerRound: number;
  idleCpuMs: number;
  /** Scraped once a second: this share of one core, i.e. of a CPU-bound broker's throughput. */
  percentOfACore: number;
}

/**
 * The broker's own CPU for scrape rounds, measured on the broker process (so the machine's other
 * load does not blur it the way it blurs throughput): `rounds` scrapes back to back, minus the
 * broker's idle CPU over the same wall time.
 */
async function scrapeCpuCost(base: string, pid: number, rounds = 100): Promise<MonitoringCost> {
  await scrapeOnce(base); // warm
  const c0 = brokerCpuMs(pid);
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) await scrapeOnce(base);
  const wall = performance.now() - t0;
  const c1 = brokerCpuMs(pid);
  await new Promise((r) => setTimeout(r, wall));
  const c2 = brokerCpuMs(pid);
  const idle = c2 - c1;
  const perRound = Math.max(0, c1 - c0 - idle) / rounds;
  return {
    rounds,
    cpuMsPerRound: round2(perRound),
    idleCpuMs: round2(idle),
    percentOfACore: round2(perRound / 10),
  };
}

/** Fetches what Prometheus and an open status page fetch, once a second. */
function startScraper(base: string): { stop(): Promise<void>; rounds(): number } {
  let running = true;
  let rounds = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await scrapeOnce(base);
      rounds++;
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
    rounds: () => rounds,
  };
}

// ---------------------------------------------------------------- memory

async function memoryPerMessage(count: number): Promise<ThroughputResult['memory']> {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const broker = await startBroker({ port: 0 });
  const url = new URL(broker.url);
  // warm up: the queue exists and the code paths ran once, so only per-message memory remains
  await sendOnly(url, 'mem', 100, Buffer.alloc(1024, 7), 'warm');
  await drainOnly(url, 'mem', 100);
  await settle();
  const before = process.memoryUsage();
  await sendOnly(url, 'mem', count, Buffer.alloc(1024, 7), 'm');
  await settle();
  const after = process.memoryUsage();
  const depth = broker.stats().queues.find((q) => q.name === 'mem')?.depth ?? 0;
  await broker.stop();
  if (depth !== count) throw new Error(`expected ${count} queued, found ${depth}`);
  const heap = (after.heapUsed - before.heapUsed) / count;
  const ab = (after.arrayBuffers - before.arrayBuffers) / count;
  return {
    messages: count,
    bytesPerMessage: Math.round(heap + ab),
    heapPerMessage: Math.round(heap),
    arrayBuffersPerMessage: Math.round(ab),
  };
}

function sendOnly(url: URL, queue: string, n: number, body: Buffer, prefix: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const conn = rhea
      .create_container()
      .connect({ host: url.hostname, port: Number(url.port), reconnect: false });
    const data = (rhea as unknown as { message: { data_section(b: Buffer): unknown } }).message.data_section(
      body,
    );
    const sender = conn.open_sender(queue);
    let sent = 0;
    let settled = 0;
    sender.on('sendable', () => {
      while (sent < n && sender.sendable()) sender.send({ body: data, message_id: `${prefix}-${sent++}` });
    });
    sender.on('accepted', () => {
      if (++settled === n) {
        conn.once('connection_close', () => resolve());
        conn.close();
      }
    });
    sender.on('rejected', () => reject(new Error('rejected')));
  });
}

function drainOnly(url: URL, queue: string, n: number): Promise<void> {
  return new Promise((resolve) => {
    const conn = rhea
      .create_container()
      .connect({ host: url.hostname, port: Number(url.port), reconnect: false });
    let got = 0;
    conn.open_receiver({ source: queue, credit_window: 100 }).on('message', () => {
      if (++got === n) {
        conn.once('connection_close', () => resolve());
        conn.close();
      }
    });
  });
}

// ---------------------------------------------------------------- run

export async function run(opts: ThroughputOptions = {}): Promise<ThroughputResult> {
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const n = opts.messages ?? 20_000;
  const sizes = opts.sizes ?? [100, 1024];
  const window = opts.window ?? 1000;
  const rabbitUrl = opts.rabbitUrl ?? process.env.RABBIT_URL;
  const protonBin = opts.protonBroker ?? process.env.PROTON_BROKER;
  const measurements: Measurement[] = [];
  const clients: Array<[string, BenchClient]> = [
    ['rhea', rheaClient],
    ['quorate', quorateClient],
  ];

  const measure = async (target: string, url: URL) => {
    let k = 0;
    for (const size of sizes) {
      for (const [name, client] of clients) {
        const body = Buffer.alloc(size, 0x61);
        const base: Measurement = {
          target,
          client: name,
          size,
          messages: n,
          sendPerSec: 0,
          receivePerSec: 0,
          endToEndPerSec: 0,
        };
        try {
          // warm-up run (JIT, queue creation) at a tenth of the size
          const q = `bench-${name}-${size}-${Date.now()}-${k++}`;
          await client(url, `${q}-warm`, Math.max(100, Math.floor(n / 10)), body, window);
          const { sendMs, receiveMs } = await client(url, q, n, body, window);
          base.sendPerSec = Math.round((n / sendMs) * 1000);
          base.receivePerSec = Math.round((n / receiveMs) * 1000);
          base.endToEndPerSec = Math.round((n / (sendMs + receiveMs)) * 1000);
        } catch (err) {
          base.error = (err as Error).message;
        }
        measurements.push(base);
        log(
          base.error
            ? `${target.padEnd(14)} ${name.padEnd(8)} ${String(size).padStart(5)} B  failed: ${base.error}`
            : `${target.padEnd(14)} ${name.padEnd(8)} ${String(size).padStart(5)} B  send ${base.sendPerSec} msg/s  receive ${base.receivePerSec} msg/s  end-to-end ${base.endToEndPerSec} msg/s`,
        );
      }
    }
  };

  const ours = await startOurBroker();
  try {
    await measure('quorate-broker', ours.url);
  } finally {
    await ours.stop();
  }
  let monitoringCost: MonitoringCost | undefined;
  if (opts.scrape ?? process.env.BENCH_SCRAPE === '1') {
    const scraped = await startOurBroker(true, [], true);
    const scraper = startScraper(scraped.httpUrl!);
    try {
      await measure('quorate-scraped', scraped.url);
      await scraper.stop();
      log(`scraper: ${scraper.rounds()} rounds of 5 requests during the runs`);
      monitoringCost = await scrapeCpuCost(scraped.httpUrl!, scraped.pid!);
      log(
        `monitoring cost: ${monitoringCost.cpuMsPerRound} ms of broker CPU per scrape round (idle ${monitoringCost.idleCpuMs} ms over the same time): scraped every second = ${monitoringCost.percentOfACore}% of one core`,
      );
    } finally {
      await scraper.stop();
      await scraped.stop();
    }
  }
  if (opts.memoryBroker ?? process.env.BENCH_MEMORY_BROKER === '1') {
    const mem = await startOurBroker(false);
    try {
      await measure('quorate-memory', mem.url);
    } finally {
      await mem.stop();
    }
  }
  if (protonBin) {
    const proton = await startProtonBroker(protonBin);
    try {
      await measure('proton-c', proton.url);
    } finally {
      await proton.stop();
    }
  }
  if (rabbitUrl) await measure('rabbitmq', new URL(rabbitUrl));

  const ratios: Record<string, number> = {};
  const find = (target: string, client: string, size: number) =>
    measurements.find((m) => m.target === target && m.client === client && m.size === size && !m.error);
  for (const size of sizes) {
    const r = find('quorate-broker', 'rhea', size);
    const o = find('quorate-broker', 'quorate', size);
    if (r && o)
      ratios[`quorate/rhea via quorate-broker ${size} B`] = round2(o.endToEndPerSec / r.endToEndPerSec);
    for (const client of ['rhea', 'quorate']) {
      const plain = find('quorate-broker', client, size);
      const scraped = find('quorate-scraped', client, size);
      if (plain && scraped)
        ratios[`scraped every 1 s/not scraped, ${client} ${size} B`] = round2(
          scraped.endToEndPerSec / plain.endToEndPerSec,
        );
    }
    const p = find('proton-c', 'rhea', size);
    const rm = find('quorate-memory', 'rhea', size);
    if (rm && p)
      ratios[`quorate-broker (no store)/proton-c serving rhea ${size} B`] = round2(
        rm.endToEndPerSec / p.endToEndPerSec,
      );
    if (r && p)
      ratios[`quorate-broker/proton-c serving rhea ${size} B`] = round2(r.endToEndPerSec / p.endToEndPerSec);
    const rr = find('rabbitmq', 'rhea', size);
    const ro = find('rabbitmq', 'quorate', size);
    if (rr && ro)
      ratios[`quorate/rhea via rabbitmq ${size} B`] = round2(ro.endToEndPerSec / rr.endToEndPerSec);
  }
  for (const [k, v] of Object.entries(ratios)) log(`ratio ${k}: ${v}`);

  const memory = await memoryPerMessage(opts.memoryMessages ?? 20_000);
  log(
    `broker memory per queued 1 KiB message: ${memory.bytesPerMessage} B (heap ${memory.heapPerMessage} + array buffers ${memory.arrayBuffersPerMessage}; target <= 1229 = 1.2 KiB)`,
  );
  return { measurements, ratios, memory, ...(monitoringCost ? { monitoringCost } : {}) };
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
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
