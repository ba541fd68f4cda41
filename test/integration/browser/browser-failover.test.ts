/**
 * quorate/browser in Debian's Chromium (docs/websocket.md#browser): a page loads the browser build
 * (built by the test from the source, as build-browser.ts builds dist/browser.js), connects over
 * WebSocket to a 3-member cluster and sends and receives while the test kills the member in use
 * twice. Every message arrives exactly once, and the page saw both failovers.
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
import { closeConn, open } from '../../cluster-broker/cluster/amqp-helpers.js';
import { startTestCluster, waitServing } from '../../cluster-broker/cluster/cluster-support.js';
import { type Chromium, launchChromium } from '../../support/chromium.js';
import { waitFor } from '../../support/net.js';

const COUNT = 300;
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

/** Each member's `quorate:ws-url`, as the member on `amqpPort` lists them in its Open. */
async function wsUrls(amqpPort: number): Promise<Map<string, string>> {
  const o = await open(amqpPort);
  const list = o.properties?.['failover-server-list'];
  void closeConn(o.conn);
  const urls = new Map<string, string>();
  for (const m of Array.isArray(list) ? (list as Record<string, unknown>[]) : [])
    if (typeof m['quorate:ws-url'] === 'string')
      urls.set(String(m['quorate:member-id']), m['quorate:ws-url']);
  return urls;
}

beforeAll(async () => {
  outdir = await mkdtemp(join(tmpdir(), 'quorate-browser-'));
  const bundle = await buildBrowserBundle(outdir);
  const page = await servePage(bundle.file);
  server = page.server;
  cluster = await startTestCluster({ memberArgs: ['--ws-port', '0', '--ws-allow-origin', page.origin] });
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
  const byId = await wsUrls(c.members()[0]!.amqpPort);
  expect(byId.size).toBe(3);
  const idOfUrl = (url: string): string | undefined =>
    [...byId].find(([, u]) => url.startsWith(u.replace(/\/$/, '')))?.[0];
  const page = await (chromium as Chromium).browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${((server as Server).address() as AddressInfo).port}/`);
  await page.waitForFunction(() => (globalThis as unknown as { ready?: boolean }).ready === true);
  type State = {
    url: string;
    sent: number;
    received: number[];
    failovers: unknown[];
    error: string;
    done: boolean;
  };
  const state = (): Promise<State> => page.evaluate(() => (globalThis as unknown as { state: State }).state);
  await page.evaluate(
    ([urls, count]) => {
      void (globalThis as unknown as { run(u: string[], n: number): Promise<void> }).run(urls, count);
    },
    [[...byId.values()], COUNT] as [string[], number],
  );
  for (const [kill, atReceived] of [
    [1, COUNT / 3],
    [2, (2 * COUNT) / 3],
  ] as const) {
    await waitFor(
      async () => {
        const s = await state();
        if (s.error) throw new Error(s.error);
        return s.received.length >= atReceived && s.url !== '';
      },
      { timeoutMs: 60_000, what: `${atReceived} received` },
    );
    const inUse = idOfUrl((await state()).url);
    expect(inUse).toBeDefined();
    await c.kill(inUse as string);
    await waitFor(async () => (await state()).failovers.length >= kill, {
      timeoutMs: 60_000,
      what: `failover ${kill}`,
    });
    await c.restart(inUse as string);
  }
  await waitFor(
    async () => {
      const s = await state();
      if (s.error) throw new Error(s.error);
      return s.done;
    },
    { timeoutMs: 120_000, what: 'all received' },
  );
  const s = await state();
  expect(errors).toEqual([]);
  expect(s.failovers.length).toBeGreaterThanOrEqual(2);
  expect(s.received.length).toBe(COUNT);
  expect([...s.received].sort((a, b) => a - b)).toEqual(Array.from({ length: COUNT }, (_, i) => i));
}, 300_000);
