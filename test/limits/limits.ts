/**
 * Limits under load: a real broker process (its CLI, a fresh data directory) holding 1,000
 * concurrent connections, 10,000 attached links and a queue of 1,000,000 messages of 1 KiB at
 * scale 1. A probe connection times send -> receive round trips before, during and after the
 * load; the broker's RSS comes from /proc. The summary says whether the broker stayed
 * responsive and within its memory budget:
 *
 *   budget (MiB) = 256 + 1.5 KiB x queued 1 KiB messages + 64 KiB x connection + 4 KiB x link
 *
 * (1.5 KiB per queued 1 KiB message is the broker's target, see src/cluster-broker/core/README.md;
 * the per-connection and per-link terms are measured allowances for socket buffers and engine
 * state.) Responsive: probe p99 under 250 ms while the broker holds connections, links and the
 * deep queue; under a saturating publisher (its own process) p99 under 2 s and max under 5 s; the
 * first of 1,000 messages from the deep queue within 2 s.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileLimits, memoryOf, openFds, startBrokerChild } from './broker-child.js';
import { attachLinks, type Conn, close, drainSome, open, Probe, probeLoop, stats } from './load.js';

export interface LimitsOptions {
  /** 1 = the full targets; the CI smoke runs 0.05. */
  scale: number;
  connections?: number;
  links?: number;
  messages?: number;
  bodyBytes?: number;
  /** Progress lines (stderr in the CLI). */
  log?: (line: string) => void;
}

type Latency = ReturnType<typeof stats>;

export interface LimitsSummary {
  scale: number;
  targets: { connections: number; links: number; messages: number; bodyBytes: number };
  fileLimit: { soft: number; hard: number };
  connections: { open: number; seconds: number; brokerFds: number };
  links: { attached: number; seconds: number };
  queue: {
    messages: number;
    publishSeconds: number;
    msgPerSec: number;
    drain1000: { firstMs: number; allMs: number };
  };
  probeMs: { idle: Latency; withConnectionsAndLinks: Latency; whilePublishing: Latency; loaded: Latency };
  /** Probe round trips over 1 s while publishing (the broker stalled). */
  stallsOver1s: number;
  brokerMemoryMiB: {
    baseline: number;
    afterConnections: number;
    afterLinks: number;
    afterQueue: number;
    peak: number;
    budget: number;
  };
  perConnectionKiB: number;
  perLinkBytes: number;
  perQueuedMessageBytes: number;
  stopMs: number;
  exitCode: number | string;
  responsive: boolean;
  withinMemory: boolean;
  ok: boolean;
}

const PUBLISHERS = 4;
const CONNECT_BATCH = 100;

export async function runLimits(opts: LimitsOptions): Promise<LimitsSummary> {
  const log = opts.log ?? (() => {});
  const t = {
    connections: opts.connections ?? Math.max(1, Math.round(1000 * opts.scale)),
    links: opts.links ?? Math.max(2, Math.round(10_000 * opts.scale)),
    messages: opts.messages ?? Math.max(1, Math.round(1_000_000 * opts.scale)),
    bodyBytes: opts.bodyBytes ?? 1024,
  };
  const limits = fileLimits();
  // our side holds every connection plus a few; the broker raises its own soft limit to the hard one
  const needed = t.connections + PUBLISHERS + 64;
  if (limits.soft < needed)
    throw new Error(
      `ulimit -n is ${limits.soft}; ${needed} file descriptors needed: raise it (ulimit -n ${needed})`,
    );

  const dataDir = mkdtempSync(path.join(tmpdir(), 'quorate-limits-'));
  const broker = await startBrokerChild(['--port', '0', '--data-dir', dataDir]);
  const mem = () => memoryOf(broker.pid).rssMiB;
  const conns: Conn[] = [];
  try {
    const baseline = mem();
    const probeConn = await open(broker.port, 'limits-probe');
    const probe = new Probe(probeConn, 'limits.probe');
    await probe.opened;
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) idle.push(await probe.roundTrip());
    log(
      `broker pid ${broker.pid} port ${broker.port}, baseline ${baseline} MiB, probe p50 ${stats(idle).p50} ms`,
    );

    // 1. connections
    let t0 = performance.now();
    for (let i = 0; i < t.connections; i += CONNECT_BATCH) {
      const batch = Array.from({ length: Math.min(CONNECT_BATCH, t.connections - i) }, (_, k) =>
        open(broker.port, `limits-c${i + k}`),
      );
      conns.push(...(await Promise.all(batch)));
    }
    const connSeconds = (performance.now() - t0) / 1000;
    const afterConnections = mem();
    const brokerFds = openFds(broker.pid);
    log(
      `${conns.length} connections in ${connSeconds.toFixed(1)} s, broker ${afterConnections} MiB, ${brokerFds} fds`,
    );

    // 2. links, spread over the connections, on 100 queues
    t0 = performance.now();
    const perConn = Math.ceil(t.links / conns.length);
    let attached = 0;
    for (let i = 0; i < conns.length && attached < t.links; i += CONNECT_BATCH) {
      const batch: Promise<void>[] = [];
      for (let k = i; k < Math.min(conns.length, i + CONNECT_BATCH) && attached < t.links; k++) {
        const n = Math.min(perConn, t.links - attached);
        attached += n;
        batch.push(attachLinks(conns[k]!, n, (j) => `limits.links.${(k * perConn + j) % 100}`));
      }
      await Promise.all(batch);
    }
    const linkSeconds = (performance.now() - t0) / 1000;
    const afterLinks = mem();
    const withConnectionsAndLinks: number[] = [];
    for (let i = 0; i < 20; i++) withConnectionsAndLinks.push(await probe.roundTrip());
    log(
      `${attached} links in ${linkSeconds.toFixed(1)} s, broker ${afterLinks} MiB, probe p50 ${stats(withConnectionsAndLinks).p50} ms`,
    );

    // 3. the deep queue, published by a few connections while the probe keeps timing
    const whilePublishing: number[] = [];
    const loop = probeLoop(probe, 50, whilePublishing);
    let lastLog = performance.now();
    const progress = setInterval(() => {
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        log(
          `publishing... broker ${mem()} MiB, probe samples ${whilePublishing.length}, last ${whilePublishing.at(-1)?.toFixed(1)} ms`,
        );
      }
    }, 1000);
    t0 = performance.now();
    try {
      await runPublisher(broker.port, 'limits.deep', t.messages, t.bodyBytes, PUBLISHERS);
    } finally {
      clearInterval(progress);
      await loop.stop();
    }
    const publishSeconds = (performance.now() - t0) / 1000;
    const afterQueue = mem();
    log(`${t.messages} messages in ${publishSeconds.toFixed(1)} s, broker ${afterQueue} MiB`);

    // 4. loaded: everything held, the probe and a consumer of the deep queue must still be served
    const loaded: number[] = [];
    for (let i = 0; i < 50; i++) loaded.push(await probe.roundTrip());
    const drainConn = await open(broker.port, 'limits-drain');
    const drain1000 = await drainSome(drainConn, 'limits.deep', Math.min(1000, t.messages));
    await close(drainConn);
    const peak = memoryOf(broker.pid).peakMiB;

    for (let i = 0; i < conns.length; i += CONNECT_BATCH)
      await Promise.all(conns.slice(i, i + CONNECT_BATCH).map(close));
    conns.length = 0;
    await close(probeConn);
    t0 = performance.now();
    broker.child.kill('SIGTERM');
    const exitCode = await broker.exited;
    const stopMs = Math.round(performance.now() - t0);

    const budget = Math.round(
      256 + (1.5 * t.messages) / 1024 + (64 * t.connections) / 1024 + (4 * t.links) / 1024,
    );
    const probes = {
      idle: stats(idle),
      withConnectionsAndLinks: stats(withConnectionsAndLinks),
      whilePublishing: stats(whilePublishing),
      loaded: stats(loaded),
    };
    // quiet phases: interactive latency; under a saturating publisher: queued behind its window
    const quiet = [probes.idle, probes.withConnectionsAndLinks, probes.loaded];
    const responsive =
      quiet.every((p) => p.p99 < 250) &&
      probes.whilePublishing.p99 < 2000 &&
      probes.whilePublishing.max < 5000 &&
      drain1000.firstMs < 2000;
    const withinMemory = peak <= budget;
    return {
      scale: opts.scale,
      targets: t,
      fileLimit: limits,
      connections: { open: t.connections, seconds: round(connSeconds), brokerFds },
      links: { attached, seconds: round(linkSeconds) },
      queue: {
        messages: t.messages,
        publishSeconds: round(publishSeconds),
        msgPerSec: Math.round(t.messages / publishSeconds),
        drain1000: { firstMs: round(drain1000.firstMs), allMs: round(drain1000.allMs) },
      },
      probeMs: probes,
      stallsOver1s: whilePublishing.filter((ms) => ms > 1000).length,
      brokerMemoryMiB: { baseline, afterConnections, afterLinks, afterQueue, peak, budget },
      perConnectionKiB: round(((afterConnections - baseline) * 1024) / t.connections),
      perLinkBytes: Math.round(((afterLinks - afterConnections) * 1048576) / Math.max(1, attached)),
      perQueuedMessageBytes: Math.round(((afterQueue - afterLinks) * 1048576) / t.messages),
      stopMs,
      exitCode,
      responsive,
      withinMemory,
      ok: responsive && withinMemory && exitCode === 0,
    };
  } finally {
    for (const c of conns) c.close();
    if (broker.child.exitCode === null && broker.child.signalCode === null) broker.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const round = (n: number): number => Math.round(n * 10) / 10;

/** Runs the bulk publisher as its own process; resolves when it reports every message accepted. */
function runPublisher(
  port: number,
  address: string,
  count: number,
  bodyBytes: number,
  connections: number,
): Promise<void> {
  const entry = fileURLToPath(new URL('./publisher-child.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', entry, String(port), address, String(count), String(bodyBytes), String(connections)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    if (err.length < 10_000) err += d.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code === 0 && out.includes('"published"')) resolve();
      else reject(new Error(`publisher exited ${code}: ${err}`));
    });
  });
}
