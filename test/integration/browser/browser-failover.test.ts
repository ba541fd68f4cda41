/**
 * quorate/browser in Debian's Chromium (docs/websocket.md#browser): a page loads the browser build
 * (built by the test from the source, as build-browser.ts builds dist/browser.js), connects over
 * WebSocket to a 3-member cluster and sends and receives while the test kills the member in use
 * twice. Every message arrives exactly once, and the page saw a failover away from each killed
 * member. The page sends in phases and waits for the test's go between them, so its traffic cannot
 * end before a kill (a kill after the page closed would wait for a failover that never comes);
 * the killed member is back and serving, on the same ws URL, before the next kill.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildBrowserBundle } from '../../../build-browser.js';
import type { ClusterHandle } from '../../../src/broker.js';
import { startTestCluster, waitServing } from '../../cluster-broker/cluster/cluster-support.js';
import { type Chromium, launchChromium } from '../../support/chromium.js';
import { waitFor } from '../../support/net.js';

/** Messages the page sends in each phase; the member in use is killed in the first two. */
const PHASES = [100, 100, 100];
const COUNT = PHASES.reduce((a, b) => a + b, 0);
/** Messages received in a phase before its kill. */
const KILL_AFTER = 20;
const PAGE = fileURLToPath(new URL('./page.html', import.meta.url));

let cluster: ClusterHandle | undefined;
let server: Server | undefined;
let chromium: Chromium | undefined;
let outdir = '';

/** Serves the page and the bundle on 127.0.0.1, a free port. */
async function servePage(bundle: string): Promise<{ server: Server; origin: string }> {
  const [html, js] = await Promise.all([readFile(PAGE), readFile(bundle)]);
  const s = createServer((req, res) => {
    if (req.url === '/browser.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(js);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { server: s, origin: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'quorate-browser-'));
  const bundle = await buildBrowserBundle(outdir);
  const page = await servePage(bundle.file);
  server = page.server;
  // wsBasePort: each member keeps its ws URL across a restart, as a deployment's members do; a
  // member restarted on a new port would leave the page's member list naming a dead endpoint
  cluster = await startTestCluster({ wsBasePort: 0, memberArgs: ['--ws-allow-origin', page.origin] });
  await waitServing(cluster);
  chromium = await launchChromium();
}, 180_000);

afterAll(async () => {
  await chromium?.close();
  await cluster?.stop();
  server?.close();
  if (outdir) await rm(outdir, { recursive: true, force: true });
});

it('sends and receives in Chromium while the member in use is killed twice: nothing lost or duplicated', async () => {
  const c = cluster as ClusterHandle;
  const byUrl = new Map(c.members().map((m) => [m.wsUrl, m.id]));
  expect(byUrl.size).toBe(3);
  const page = await (chromium as Chromium).browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${((server as Server).address() as AddressInfo).port}/`);
  await page.waitForFunction(() => (globalThis as unknown as { ready?: boolean }).ready === true);
  type State = { sent: number; received: number[]; failovers: unknown[]; error: string; done: boolean };
  type PageApi = {
    state: State;
    inUse(): string;
    proceed(phase: number): void;
    run(urls: string[], phases: number[]): Promise<void>;
  };
  const state = async (): Promise<State> => {
    const s = await page.evaluate(() => (globalThis as unknown as PageApi).state);
    if (s.error) throw new Error(`the page failed: ${s.error}`);
    return s;
  };
  const inUse = (): Promise<string> => page.evaluate(() => (globalThis as unknown as PageApi).inUse());
  await page.evaluate(
    ([urls, phases]) => {
      void (globalThis as unknown as PageApi).run(urls, phases);
    },
    [[...byUrl.keys()] as string[], PHASES] as [string[], number[]],
  );
  for (const phase of [0, 1]) {
    // the page cannot send past this phase before the test lets it, so the kill meets traffic
    const killAt = PHASES.slice(0, phase).reduce((a, b) => a + b, 0) + KILL_AFTER;
    // the sender is still in this phase (its gate is closed): the page's member now is the one in use
    let url = '';
    await waitFor(
      async () => {
        url = await inUse();
        return url !== '' && (await state()).received.length >= killAt;
      },
      { timeoutMs: 120_000, what: `${killAt} received` },
    );
    const victim = byUrl.get(url);
    expect(victim, `the page is connected to ${url}`).toBeDefined();
    const before = (await state()).failovers.length;
    await c.kill(victim as string);
    await waitFor(async () => (await state()).failovers.length > before, {
      timeoutMs: 120_000,
      what: `the failover from ${victim}`,
    });
    expect((await state()).failovers[before]).toMatchObject({ from: url });
    // back and serving before the next kill, so two of three members always serve
    await c.restart(victim as string);
    await waitServing(c, c.ids, 120_000);
    expect(c.members().find((m) => m.id === victim)?.wsUrl).toBe(url);
    await page.evaluate((next) => (globalThis as unknown as PageApi).proceed(next), phase + 1);
  }
  await waitFor(async () => (await state()).done, { timeoutMs: 120_000, what: 'all received' });
  const s = await state();
  expect(errors).toEqual([]);
  expect(s.failovers.length).toBeGreaterThanOrEqual(2);
  expect(s.received.length).toBe(COUNT);
  expect([...s.received].sort((a, b) => a - b)).toEqual(Array.from({ length: COUNT }, (_, i) => i));
}, 600_000);
