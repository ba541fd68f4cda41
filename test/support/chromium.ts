/**
 * Debian's chromium (installed by .ci/run; CHROMIUM_PATH overrides) driven by playwright-core, with
 * no browser download: a throwaway profile under the OS temp dir, removed by close().
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export interface Chromium {
  browser: BrowserContext;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function launchChromium(
  viewport?: { width: number; height: number },
  /** HTTP basic credentials the browser answers a 401 with, as a user typing them would. */
  httpCredentials?: { username: string; password: string },
): Promise<Chromium> {
  const profile = await mkdtemp(join(tmpdir(), 'quorate-chromium-'));
  try {
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      // no sandbox (CI runs as root); nothing that reaches beyond loopback
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      ...(viewport ? { viewport } : {}),
      ...(httpCredentials ? { httpCredentials } : {}),
    });
    return {
      browser,
      close: async () => {
        await browser.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
}
