/**
 * The status page's weight and load time in Debian's chromium (CHROMIUM_PATH overrides), served
 * by a single-node broker in this process with a few queues and a connection: bytes transferred
 * for the page, time to DOMContentLoaded and time until the first data is drawn
 * (`body[data-loaded]`), over several fresh loads.
 *
 *   npx tsx bench/run.ts status-page
 */
import { startBroker } from '../src/broker.js';
import { connect } from '../src/index.js';
import { launchChromium } from '../test/support/chromium.js';

export interface StatusPageResult {
  loads: number;
  pageBytes: number;
  domContentLoadedMs: { median: number; max: number };
  firstDataMs: { median: number; max: number };
}

export async function run(
  opts: { log?: (line: string) => void; loads?: number } = {},
): Promise<StatusPageResult> {
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const loads = opts.loads ?? 7;
  const broker = await startBroker({ httpPort: 0 });
  const conn = await connect({ urls: broker.url, containerId: 'status-page-bench' });
  const chromium = await launchChromium();
  const browser = chromium.browser;
  try {
    for (const q of ['orders', 'invoices', 'emails']) {
      const s = await conn.openSender(q);
      for (let i = 0; i < 50; i++) await s.send({ body: i });
    }
    let pageBytes = 0;
    for (const path of ['/', '/status.js', '/status.css']) {
      pageBytes += (await (await fetch(`${broker.httpUrl}${path}`)).arrayBuffer()).byteLength;
    }
    const dcl: number[] = [];
    const first: number[] = [];
    for (let i = 0; i < loads; i++) {
      const page = await browser.newPage();
      const t0 = Date.now();
      await page.goto(broker.httpUrl!, { waitUntil: 'domcontentloaded' });
      dcl.push(Date.now() - t0);
      await page.waitForSelector('body[data-loaded="true"]');
      first.push(Date.now() - t0);
      await page.close();
    }
    const stat = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return { median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
    };
    const result = { loads, pageBytes, domContentLoadedMs: stat(dcl), firstDataMs: stat(first) };
    log(
      `status page: ${pageBytes} B (HTML+JS+CSS); DOMContentLoaded median ${result.domContentLoadedMs.median} ms (max ${result.domContentLoadedMs.max}); first data drawn median ${result.firstDataMs.median} ms (max ${result.firstDataMs.max}), ${loads} loads`,
    );
    return result;
  } finally {
    await chromium.close();
    await conn.close();
    await broker.stop();
  }
}
