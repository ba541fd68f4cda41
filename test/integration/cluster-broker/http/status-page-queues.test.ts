/**
 * The status page's Purge and Delete buttons in a real browser (Debian's chromium driven by
 * playwright-core; docs/monitoring.md#page-queue-actions): each asks first, and cancelling
 * changes nothing; confirmed, it goes through the HTTP API's queue changes, the page shows the
 * result, and the broker's own answer (`GET /api/queues/NAME`) shows the queue empty or gone. A
 * user who may read the page but holds no manage grant is shown the API's refusal.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dialog, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerHandle, hashPassword, startBroker } from '../../../../src/broker.js';
import { connect } from '../../../../src/index.js';
import { type Chromium, launchChromium } from '../../../support/chromium.js';

let dir: string;
let broker: BrokerHandle;
const browsers: Chromium[] = [];
const pageErrors: string[] = [];
const QUEUES = { 'purge-me': 5, 'delete-me': 3, 'keep-me': 2 } as const;
const OPS = `Basic ${Buffer.from('ops:ops-pw').toString('base64')}`;

/** The queue as the broker describes it (undefined: 404, no such queue). */
async function queueOnBroker(name: string): Promise<{ messageCount: number } | undefined> {
  const res = await fetch(`${broker.httpUrl}/api/queues/${encodeURIComponent(name)}`, {
    headers: { authorization: OPS },
  });
  if (res.status === 404) return undefined;
  expect(res.status).toBe(200);
  return (await res.json()) as { messageCount: number };
}

async function openPage(username: string, password: string): Promise<Page> {
  const chromium = await launchChromium({ width: 1400, height: 900 }, { username, password });
  browsers.push(chromium);
  const page = await chromium.browser.newPage();
  // each step is one request and a redraw; the generous deadline is for a loaded CI machine
  page.setDefaultTimeout(STEP_WITHIN_MS);
  page.on('pageerror', (err) => pageErrors.push(err.message));
  await page.goto(broker.httpUrl!);
  await page.waitForSelector('body[data-loaded="true"]');
  return page;
}

const STEP_WITHIN_MS = 60_000;
const TEST_WITHIN_MS = 240_000;

const row = (name: string): string => `#queues tr[data-queue="${name}"]`;
const depthCell = (name: string): string => `${row(name)} td:nth-child(2)`;

/** Clicks `action` on `queue`'s row and answers the confirmation; resolves with its text. */
async function clickAndAnswer(
  page: Page,
  queue: string,
  action: 'purge' | 'delete',
  answer: 'accept' | 'dismiss',
): Promise<string> {
  const asked = new Promise<string>((resolve) => {
    page.once('dialog', (d: Dialog) => {
      expect(d.type()).toBe('confirm');
      resolve(d.message());
      void (answer === 'accept' ? d.accept() : d.dismiss());
    });
  });
  await page.click(`${row(queue)} button[data-action="${action}"]`);
  return asked;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorate-page-queues-'));
  const users = join(dir, 'users');
  await writeFile(
    users,
    [
      `ops:${await hashPassword('ops-pw')}`,
      `watcher:${await hashPassword('watch-pw')}`,
      `app:${await hashPassword('app-pw')}`,
      '',
    ].join('\n'),
  );
  broker = await startBroker({
    dataDir: join(dir, 'store'),
    usersFile: users,
    anonymous: false,
    httpPort: 0,
    permissions: {
      users: {
        ops: { manage: true, monitor: true },
        watcher: { monitor: true },
        app: { send: Object.keys(QUEUES) },
      },
    },
  });
  const conn = await connect({ urls: [broker.url], username: 'app', password: 'app-pw' });
  for (const [name, count] of Object.entries(QUEUES)) {
    const sender = await conn.openSender(name);
    for (let i = 0; i < count; i++)
      expect((await sender.send({ body: `${name}-${i}` })).state).toBe('accepted');
  }
  await conn.close();
}, 60_000);

afterAll(async () => {
  for (const b of browsers) await b.close();
  await broker?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('queue actions on the status page', () => {
  it(
    'purge and delete ask first; cancelled they change nothing, confirmed the broker shows them done',
    async () => {
      const page = await openPage('ops', 'ops-pw');
      for (const [name, count] of Object.entries(QUEUES)) {
        await page.waitForSelector(row(name));
        expect(await page.textContent(depthCell(name))).toBe(String(count));
      }

      // cancelled: no request (the next confirmed action's result comes after anything they sent)
      expect(await clickAndAnswer(page, 'keep-me', 'purge', 'dismiss')).toContain("'keep-me'");
      expect(await clickAndAnswer(page, 'keep-me', 'delete', 'dismiss')).toContain("'keep-me'");
      expect(await page.isHidden('#queue-action')).toBe(true);

      expect(await clickAndAnswer(page, 'purge-me', 'purge', 'accept')).toMatch(
        /^Purge queue 'purge-me'\? Its 5 /,
      );
      await page.waitForSelector(`#queue-action.ok:text-is("Purged 5 messages from 'purge-me'.")`);
      expect(await queueOnBroker('purge-me')).toMatchObject({ messageCount: 0 });
      await page.waitForSelector(`${depthCell('purge-me')}:text-is("0")`);

      expect(await clickAndAnswer(page, 'delete-me', 'delete', 'accept')).toMatch(
        /^Delete queue 'delete-me'/,
      );
      await page.waitForSelector(`#queue-action.ok:text-is("Deleted 'delete-me' (3 messages dropped).")`);
      expect(await queueOnBroker('delete-me')).toBeUndefined();
      await page.waitForSelector(row('delete-me'), { state: 'detached' });

      // what was cancelled is as it was
      expect(await queueOnBroker('keep-me')).toMatchObject({ messageCount: 2 });
      expect(await page.textContent(depthCell('keep-me'))).toBe('2');
      expect(pageErrors).toEqual([]);
    },
    TEST_WITHIN_MS,
  );

  it(
    'a user without the manage grant is shown the refusal, and nothing changes',
    async () => {
      const page = await openPage('watcher', 'watch-pw');
      await page.waitForSelector(row('keep-me'));
      await clickAndAnswer(page, 'keep-me', 'purge', 'accept');
      await page.waitForSelector(
        `#queue-action.bad:text-is("purge 'keep-me' refused: HTTP 403: user 'watcher' has no manage grant")`,
      );
      expect(await queueOnBroker('keep-me')).toMatchObject({ messageCount: 2 });
      expect(pageErrors).toEqual([]);
    },
    TEST_WITHIN_MS,
  );
});
