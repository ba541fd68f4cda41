/**
 * `npm run demo -- --browser` (docs/websocket.md#demo) run as users run it, in Debian's Chromium:
 * the demo is a child process; its printed URL is the readiness signal; the page it serves runs
 * quorate/browser against the demo's cluster while the demo kills the member the page uses. At
 * the end the page itself must show a failover, accepted messages, and 0 lost, 0 duplicates; the
 * demo must print the same verdict and exit 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { type Chromium, launchChromium } from '../../support/chromium.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** How long the page sends: room for a few kills of the member it uses (one every KILL_EVERY s). */
const SECONDS = 30;
const KILL_EVERY = 5;
/** Generous: a loaded 2-core machine starts a 3-member cluster in tens of seconds. */
const DEADLINE_MS = 240_000;

let demo: ChildProcess | undefined;
let chromium: Chromium | undefined;

afterAll(async () => {
  await chromium?.close();
  // still running only if the test failed early: SIGTERM lets it stop its cluster, by its PID
  if (demo?.pid !== undefined && demo.exitCode === null && demo.signalCode === null) {
    const exited = new Promise((resolve) => demo?.once('exit', resolve));
    process.kill(demo.pid, 'SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 60_000))]);
    if (demo.exitCode === null && demo.signalCode === null) process.kill(demo.pid, 'SIGKILL');
  }
});

it('the browser demo page shows failovers, and nothing lost or duplicated', async () => {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'examples/failover-demo.ts',
      '--browser',
      '--seconds',
      String(SECONDS),
      '--kill-every',
      String(KILL_EVERY),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  demo = child;
  let output = '';
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // the readiness signal: the line naming the page's URL
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no URL line in ${DEADLINE_MS} ms:\n${output}`)),
      DEADLINE_MS,
    );
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      output += `${line}\n`;
      const m = /^open (http:\/\/127\.0\.0\.1:\d+\/) in a browser/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    void exited.then((code) =>
      reject(new Error(`the demo exited (${code}) before printing its URL:\n${output}`)),
    );
  });

  chromium = await launchChromium();
  const page = await chromium.browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  // the member in use is highlighted once the page is connected
  await page.waitForSelector('.member.in-use', { timeout: DEADLINE_MS });
  // a string: it runs in the page, where document exists (the test's types have no DOM)
  await page.waitForFunction(
    "['done', 'failed'].includes(document.getElementById('state')?.textContent ?? '')",
    undefined,
    {
      timeout: DEADLINE_MS,
      polling: 500,
    },
  );
  const text = async (id: string): Promise<string> => (await page.textContent(`#${id}`)) ?? '';
  const shown = {
    state: await text('state'),
    sent: Number(await text('sent')),
    accepted: Number(await text('accepted')),
    received: Number(await text('received')),
    duplicates: await text('duplicates'),
    lost: await text('lost'),
    failovers: Number(await text('failovers')),
    failoverLines: await page.locator('#log .failover').count(),
    log: (await text('log')).slice(-2000),
  };
  const context = `page: ${JSON.stringify(shown)}\ndemo output:\n${output}`;
  expect(shown.state, context).toBe('done');
  expect(errors, context).toEqual([]);
  expect(shown.failovers, context).toBeGreaterThanOrEqual(1);
  expect(shown.failoverLines, context).toBeGreaterThanOrEqual(1);
  expect(shown.accepted, context).toBeGreaterThan(0);
  expect(shown.received, context).toBeGreaterThanOrEqual(shown.accepted);
  expect(shown.lost, context).toBe('0');
  expect(shown.duplicates, context).toBe('0');

  // the demo read the same counters from the page's reports, printed its verdict and exits 0
  const code = await Promise.race([
    exited,
    new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), DEADLINE_MS)),
  ]);
  expect(code, output).toBe(0);
  expect(output).toContain('OK: nothing lost, nothing duplicated.');
  expect(output).toMatch(/kill -9 n\d .*the member the page uses/);
}, 900_000);
