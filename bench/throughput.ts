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
 * (`--http-port`) while a scraper fetches /metrics, /api/overview, /api/queues and
 * /api/connections once a second (the status page's and Prometheus's load), with the ratio.
 *
 *   npx tsx bench/throughput.ts            or   npx tsx bench/run.ts throughput
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import rhea from 'rhea';
import { startBroker } from '../src/broker.js';

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
  /** Messages queued for the memory figure. Default 20_000. */
  memoryMessages?: number;
  /** Also measure with the monitoring endpoints scraped every second. Default: env BENCH_SCRAPE=1. */
  scrape?: boolean;
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
  measurements: Measurement[];
  ratios: Record<string, number>;
  memory: {
    messages: number;
    bytesPerMessage: number;
    heapPerMessage: number;
    arrayBuffersPerMessage: number;
  };
}

type Client = (
  url: URL,
  queue: string,
  n: number,
  body: Buffer,
  window: number,
) => Promise<{ sendMs: number; receiveMs: number }>;

const root = fileURLToPath(new URL('..', import.meta.url));

// ---------------------------------------------------------------- clients

const rheaClient: Client = (url, queue, n, body, window) =>
  new Promise((resolve, reject) => {
    const container = rhea.create_container();
    const conn = container.connect({
      host: url.hostname,
      port: Number(url.port),
      reconnect: false,
      ...(url.username
        ? { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
        : {}),
    } as rhea.ConnectionOptions);
    const data = (rhea as unknown as { message: { data_section(b: Buffer): unknown } }).message.data_section(
      body,
    );
    let sent = 0;
    let settled = 0;
    let got = 0;
    const t0 = performance.now();
    let t1 = 0;
    conn.on('connection_error', (ctx) => reject(new Error(String(ctx.connection.error))));
    conn.on('disconnected', (ctx) => {
      if (got < n) reject(new Error(`disconnected: ${String(ctx.error ?? '')}`));
    });
    const sender = conn.open_sender(queue);
    const pump = () => {
      while (sent < n && sent - settled < window && sender.sendable()) {
        sender.send({ body: data, message_id: `r-${sent}` });
        sent++;
      }
    };
    sender.on('sendable', pump);
    sender.on('rejected', () => reject(new Error('rejected')));
    sender.on('accepted', () => {
      settled++;
      if (settled < n) {
        pump();
        return;
      }
      t1 = performance.now();
      sender.close();
      const receiver = conn.open_receiver({ source: queue, credit_window: window });
      receiver.on('message', () => {
        if (++got === n) {
          const t2 = performance.now();
          conn.close();
          resolve({ sendMs: t1 - t0, receiveMs: t2 - t1 });
        }
      });
    });
  });

/** Our client, if the package root exports `connect` (it is being written; a failure is reported, not fatal). */
const ourClient: Client = async (url, queue, n, body, window) => {
  const mod = (await import('../src/index.js')) as unknown as {
    connect?: (o: { urls: string; reconnect?: false }) => Promise<OurConnection>;
  };
  if (typeof mod.connect !== 'function') throw new Error('src/index.ts exports no connect() yet');
  const conn = await mod.connect({ urls: url.href, reconnect: false });
  try {
    const sender = await conn.openSender(queue);
    let next = 0;
    const t0 = performance.now();
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const r = await sender.send({ body, messageId: `o-${i}` });
        if (r.state !== 'accepted') throw new Error(`send ${i}: ${r.state}`);
      }
    };
    await Promise.all(Array.from({ length: window }, worker));
    const t1 = performance.now();
    await sender.close();
    const receiver = await conn.openReceiver(queue, { credit: window, confirmAccept: false });
    let got = 0;
    for await (const d of receiver) {
      void d.accept();
      if (++got === n) break;
    }
    const t2 = performance.now();
    await receiver.close().catch(() => {});
    return { sendMs: t1 - t0, receiveMs: t2 - t1 };
  } finally {
    await conn.close().catch(() => {});
  }
};

interface OurConnection {
  openSender(a: string): Promise<{
    send(m: { body: Buffer; messageId: string }): Promise<{ state: string }>;
    close(): Promise<void>;
  }>;
  openReceiver(
    a: string,
    o: { credit: number; confirmAccept: boolean },
  ): Promise<AsyncIterable<{ accept(): Promise<void> }> & { close(): Promise<void> }>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------- brokers

interface RunningBroker {
  url: URL;
  stop(): Promise<void>;
}

async function spawnReady(
  cmd: string,
  args: string[],
): Promise<{ child: ChildProcess; port: number; httpPort?: number }> {
  const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const ready = await new Promise<{ amqpPort: number; httpPort?: number }>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('broker not ready within 30 s')), 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const v = JSON.parse(line) as { ready?: boolean; amqpPort?: number; httpPort?: number };
        if (v.ready && typeof v.amqpPort === 'number') {
          clearTimeout(t);
          resolve(v as { amqpPort: number; httpPort?: number });
        }
      } catch {
        // not the ready line
      }
    });
    child.once('exit', (code) => reject(new Error(`broker exited with ${code}`)));
  });
  return {
    child,
    port: ready.amqpPort,
    ...(ready.httpPort !== undefined ? { httpPort: ready.httpPort } : {}),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function startOurBroker(durable = true, scraped = false): Promise<RunningBroker> {
  const dir = await mkdtemp(join(tmpdir(), 'qb-bench-'));
  const { child, port, httpPort } = await spawnReady(process.execPath, [
    '--import',
    'tsx',
    'src/cluster-broker/cli/main.ts',
    '--port',
    '0',
    ...(durable ? ['--data-dir', dir] : []),
    ...(scraped ? ['--http-port', '0'] : []),
  ]);
  const scraper = httpPort === undefined ? undefined : startScraper(`http://127.0.0.1:${httpPort}`);
  return {
    url: new URL(`amqp://127.0.0.1:${port}`),
    async stop() {
      await scraper?.stop();
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Fetches what Prometheus and an open status page fetch, once a second. */
function startScraper(base: string): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      for (const path of ['/metrics', '/api/overview', '/api/queues', '/api/connections', '/api/history']) {
        const res = await fetch(`${base}${path}`);
        if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
        await res.arrayBuffer();
      }
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (performance.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

async function startProtonBroker(bin: string): Promise<RunningBroker> {
  const port = await freePort();
  const child = spawn(bin, ['127.0.0.1', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('proton broker not listening')), 10_000);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      if (l.includes('listening')) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  return { url: new URL(`amqp://127.0.0.1:${port}`), stop: () => stopChild(child) };
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
  const clients: Array<[string, Client]> = [
    ['rhea', rheaClient],
    ['quorate', ourClient],
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
  const scrape = opts.scrape ?? process.env.BENCH_SCRAPE === '1';
  if (scrape) {
    const scraped = await startOurBroker(true, true);
    try {
      await measure('quorate-scraped', scraped.url);
    } finally {
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
    `broker memory per queued 1 KiB message: ${memory.bytesPerMessage} B (heap ${memory.heapPerMessage} + array buffers ${memory.arrayBuffersPerMessage}; target <= 1536)`,
  );
  return { measurements, ratios, memory };
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
