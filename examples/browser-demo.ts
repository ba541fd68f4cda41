/**
 * The browser mode of the failover demo (`npm run demo -- --browser`, docs/websocket.md#demo): a
 * reference cluster whose members also serve AMQP over WebSocket, and a small local web server
 * for a page (browser-demo.html) that runs `quorate/browser`: it sends and receives on its own
 * queue and shows a live log, the counters and the member list with the one in use highlighted.
 * The page tells this process which member it uses (POST /report); the same nemesis as the
 * terminal demo (`killInUseLoop`) kill -9s that member every few seconds, so failovers show on
 * the page. Without `--seconds` it runs until Ctrl-C; with `--seconds N` the pages are told to
 * stop sending N s after the URL is printed, they drain and report their final counters, the
 * demo prints them and exits (0: every page's acknowledged messages arrived once).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ClusterHandle, startCluster } from 'quorate/broker';
import { formatGrid, killInUseLoop, type Victim } from './demo-cluster.js';

export interface BrowserDemoOptions {
  /** how long the pages send; undefined: until Ctrl-C */
  seconds: number | undefined;
  killEveryMs: number;
  nodes: number;
  /** sends each page keeps in flight */
  window: number;
}

/** What a page reports (POST /report), at least every half second and at once on a failover. */
export interface PageReport {
  /** the page's name: its queue's */
  page: string;
  /** the WebSocket URL the page's connection uses now ('' while it reconnects) */
  inUse: string;
  sent: number;
  accepted: number;
  received: number;
  duplicates: number;
  /** acknowledged but never received: known once the page has drained (null before) */
  lost: number | null;
  failovers: number;
  done: boolean;
  error: string;
}

/** The demo's answer to a report: what the page shows beside its own counters. */
interface ReportAnswer {
  members: { id: string; wsUrl: string | null; state: string; pid: number | null }[];
  kills: (Victim & { at: number })[];
  /** stop sending, drain and report the final counters */
  stop: boolean;
}

/** A report body larger than this is refused (413) before it is read further. */
const MAX_REPORT_BYTES = 16 * 1024;
/** After the pages are told to stop: how long the demo waits for their final reports. */
const DRAIN_WAIT_MS = 60_000;

export async function runBrowserDemo(o: BrowserDemoOptions): Promise<number> {
  const bundle = await browserBundle();
  const page = await readFile(fileURLToPath(new URL('./browser-demo.html', import.meta.url)));
  const reports = new Map<string, PageReport>();
  const kills: (Victim & { at: number })[] = [];
  let lastReporter = '';
  let stop = false;
  let pages = 0;
  let cluster: ClusterHandle | undefined;

  const answer = (): ReportAnswer => ({
    members: (cluster?.members() ?? []).map((m) => ({
      id: m.id,
      wsUrl: m.wsUrl,
      state: m.state,
      pid: m.pid,
    })),
    kills,
    stop,
  });
  const server = createServer((req, res) => {
    route(req, res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/')
      return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    if (req.method === 'GET' && req.url === '/browser.js')
      return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    if (req.method === 'GET' && req.url === '/config.json') {
      // each page its own queue: two open tabs must not take each other's messages
      const config = { queue: `browser-demo-${++pages}`, urls: cluster?.wsUrls ?? [], window: o.window };
      return json(res, config);
    }
    if (req.method === 'POST' && req.url === '/report') {
      const report = parseReport(await readBody(req, res));
      if (report === undefined) return void (res.headersSent || res.writeHead(400).end('bad report\n'));
      const before = reports.get(report.page);
      // a report sent before the final one may arrive after it: the final counters stay
      if (before?.done) return json(res, answer());
      if (before === undefined) process.stdout.write(`page ${report.page} opened\n`);
      if (before !== undefined && report.failovers > before.failovers)
        process.stdout.write(`page ${report.page}: failover to ${report.inUse}\n`);
      if (report.done) process.stdout.write(`page ${report.page} drained\n`);
      reports.set(report.page, report);
      if (!report.done) lastReporter = report.page;
      return json(res, answer());
    }
    res.writeHead(404).end();
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const stopped = new AbortController();
  const onSignal = () => stopped.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    process.stdout.write(`starting a ${o.nodes}-member reference cluster with WebSocket ports...\n`);
    // the page's own origin is the one a browser sends on the WebSocket upgrade (docs/websocket.md#origins)
    cluster = await startCluster({
      nodes: o.nodes,
      autoRestart: true,
      wsBasePort: 0,
      memberArgs: ['--ws-allow-origin', origin],
    });
    for (const m of cluster.members()) process.stdout.write(`  ${m.id}  ${m.wsUrl}  pid ${m.pid}\n`);
    const sendFor = o.seconds === undefined ? 'Ctrl-C stops it' : `the page sends for ${o.seconds} s`;
    process.stdout.write(`open ${origin}/ in a browser (${sendFor})\n`);
    const stopAt = o.seconds === undefined ? Number.POSITIVE_INFINITY : Date.now() + o.seconds * 1000;
    const c = cluster;
    const nemesis = killInUseLoop({
      cluster: c,
      queue: 'browser-demo-probe',
      inUse: () => reports.get(lastReporter)?.inUse || undefined,
      stopAt,
      everyMs: o.killEveryMs,
      signal: stopped.signal,
      killing: (v) => {
        process.stdout.write(
          `kill -9 ${v.id}${v.wasLeader ? ' (the leader)' : ''} (pid ${v.pid}), the member the page uses\n`,
        );
        kills.push({ ...v, at: Date.now() });
      },
    });
    await Promise.race([until(stopAt), aborted(stopped.signal)]);
    stop = true;
    await nemesis;
    if (!stopped.signal.aborted) {
      process.stdout.write('pages told to stop sending; waiting for them to drain...\n');
      const deadline = Date.now() + DRAIN_WAIT_MS;
      while (Date.now() < deadline && !stopped.signal.aborted && !allDone(reports))
        await until(Date.now() + 200);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await cluster?.stop();
  }
  return summarize(reports, kills.length, stopped.signal.aborted);
}

/** The table of every page's last report, and the exit code: 0 when each drained page lost and duplicated nothing. */
function summarize(reports: Map<string, PageReport>, kills: number, interrupted: boolean): number {
  if (reports.size === 0) {
    process.stdout.write('no page was opened\n');
    return interrupted ? 0 : 1;
  }
  const header = ['page', 'sent', 'accepted', 'received', 'duplicates', 'lost', 'failovers', 'state'];
  const rows = [...reports.values()].map((r) => [
    r.page,
    r.sent,
    r.accepted,
    r.received,
    r.duplicates,
    r.lost ?? '-',
    r.failovers,
    r.error ? 'failed' : r.done ? 'drained' : 'not drained',
  ]);
  process.stdout.write(`\n${formatGrid(header, rows)}\nmembers killed: ${kills}\n`);
  const drained = [...reports.values()].filter((r) => r.done);
  const ok =
    drained.length > 0 &&
    drained.every((r) => r.lost === 0 && r.duplicates === 0 && r.accepted > 0 && !r.error) &&
    (interrupted || drained.length === reports.size);
  process.stdout.write(ok ? '\nOK: nothing lost, nothing duplicated.\n' : '\nFAILED: see the table above.\n');
  return ok || (interrupted && drained.length === 0) ? 0 : 1;
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

function allDone(reports: Map<string, PageReport>): boolean {
  return [...reports.values()].every((r) => r.done || r.error !== '');
}

/**
 * dist/browser.js of this package. Missing in a checkout that was never built: built here with
 * the repository's build-browser.ts when it is there, else the reader is told to build.
 */
async function browserBundle(): Promise<Buffer> {
  const root = dirname(fileURLToPath(import.meta.resolve('quorate/package.json')));
  const file = join(root, 'dist', 'browser.js');
  if (!existsSync(file)) {
    const script = join(root, 'build-browser.ts');
    if (!existsSync(script)) throw new Error(`${file} is missing: run npm run build first`);
    process.stdout.write(`${file} is missing: building it (npm run build makes it too)...\n`);
    const built = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0)
      throw new Error(`building ${file} failed: run npm run build and look at its errors`);
  }
  return readFile(file);
}

/** The request's body, at most MAX_REPORT_BYTES (413 and undefined beyond). */
async function readBody(req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_REPORT_BYTES) {
    res.writeHead(413).end();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REPORT_BYTES) {
      res.writeHead(413).end();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A well-formed report, or undefined. */
function parseReport(body: string | undefined): PageReport | undefined {
  if (body === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  const counts = ['sent', 'accepted', 'received', 'duplicates', 'failovers'] as const;
  if (typeof r.page !== 'string' || r.page.length > 64 || typeof r.inUse !== 'string') return undefined;
  if (!counts.every((k) => Number.isSafeInteger(r[k]))) return undefined;
  if (r.lost !== null && !Number.isSafeInteger(r.lost)) return undefined;
  if (typeof r.done !== 'boolean' || typeof r.error !== 'string') return undefined;
  return r as unknown as PageReport;
}

function until(at: number): Promise<void> {
  if (at === Number.POSITIVE_INFINITY) return new Promise(() => {});
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
