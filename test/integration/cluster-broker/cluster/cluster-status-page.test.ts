/**
 * The status page in a real browser: Debian's chromium (installed by .ci/run; CHROMIUM_PATH
 * overrides) driven by playwright-core, no browser download. A member's page shows the three
 * members and the leader; after the leader is killed it shows that member down and a new leader
 * within seconds, and the member up again after its restart. STATUS_PAGE_SCREENSHOT=file.png
 * keeps a screenshot of the page after the kill.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterHandle } from '../../../../src/broker.js';
import {
  range,
  sendVia,
  startTestCluster,
  waitLeader,
  waitServing,
} from '../../../cluster-broker/cluster/cluster-support.js';
import { type Chromium, launchChromium } from '../../../support/chromium.js';

/** "Within a few seconds" of a kill, on a loaded 2-core machine. */
const SHOWS_WITHIN_MS = 10_000;

let handle: ClusterHandle;
let browser: BrowserContext;
let chromium: Chromium | undefined;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  handle = await startTestCluster();
  await waitServing(handle);
  chromium = await launchChromium({ width: 1200, height: 800 });
  browser = chromium.browser;
  page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await chromium?.close();
  await handle?.stop();
});

const memberCard = (id: string): string => `.member[data-member="${id}"]`;

describe('the status page in chromium', () => {
  it('shows the three members, the leader, and a member going down and coming back', async () => {
    const leader = await waitLeader(handle);
    const viewer = handle.ids.find((x) => x !== leader)!;
    await sendVia(handle, leader, 'page-orders', range('p', 20));
    await page.goto(handle.members().find((m) => m.id === viewer)!.httpUrl!);
    await page.waitForSelector('body[data-loaded="true"]', { timeout: 15_000 });

    for (const id of handle.ids) await page.waitForSelector(`${memberCard(id)}[data-state="up"]`);
    await page.waitForSelector(`${memberCard(leader)}[data-leader="true"]`);
    expect(await page.locator('.member[data-leader="true"]').count()).toBe(1);
    await page.waitForSelector('#queues tr[data-queue="page-orders"]');
    expect(await page.textContent('#queues tr[data-queue="page-orders"] td:nth-child(2)')).toBe('20');
    expect(await page.locator('#queues tr[data-queue="page-orders"] svg.spark').count()).toBe(1);
    expect(await page.textContent('#health')).toContain('serving');
    // client counts per member, the cluster's in the connections heading (docs/monitoring.md#cluster-counts)
    expect(await page.textContent(`${memberCard(leader)} .counts`)).toMatch(
      /^\d+ connections · \d+ consumers$/,
    );
    expect(await page.textContent('#cluster-counts')).toMatch(/^cluster: \d+ connections · \d+ consumers$/);

    await handle.kill(leader);
    await page.waitForSelector(`${memberCard(leader)}[data-state="down"]`, { timeout: SHOWS_WITHIN_MS });
    // a string expression: it runs in the page (this project compiles without the DOM types)
    await page.waitForFunction(
      `(() => {
        const l = document.querySelector('.member[data-leader="true"]');
        return l !== null && l.getAttribute('data-member') !== ${JSON.stringify(leader)};
      })()`,
      undefined,
      { timeout: SHOWS_WITHIN_MS },
    );
    // a member that cannot be reached has unknown counts, not 0
    await page.waitForSelector(`${memberCard(leader)} .counts:text-is("clients unknown")`, {
      timeout: SHOWS_WITHIN_MS,
    });
    expect(await page.textContent('#cluster-counts')).toContain(`(not counted: ${leader})`);
    const shot = process.env.STATUS_PAGE_SCREENSHOT;
    if (shot) await page.screenshot({ path: shot, fullPage: true });

    await handle.restart(leader);
    await page.waitForSelector(`${memberCard(leader)}[data-state="up"]`, { timeout: 30_000 });
    expect(pageErrors).toEqual([]);
  });
});
