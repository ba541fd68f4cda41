/**
 * Runs a TypeScript probe in a child Node with --allow-natives-syntax (so it may ask V8, e.g.
 * `%HaveSameMap`, through `eval`), and returns what its last output line says, as JSON.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The file URL of `src/<path>`, to import from a probe's text. */
export const srcUrl = (path: string): string =>
  pathToFileURL(fileURLToPath(new URL(`../../src/${path}`, import.meta.url))).href;

/** Runs `script` (the probe's source) and parses its last line. */
export function runNativesProbe(name: string, script: string): unknown {
  const dir = mkdtempSync(join(tmpdir(), `quorate-${name}-`));
  try {
    const probe = join(dir, 'probe.mts');
    writeFileSync(probe, script);
    const tsx = createRequire(import.meta.url).resolve('tsx');
    const out = execFileSync(
      process.execPath,
      ['--allow-natives-syntax', '--import', pathToFileURL(tsx).href, probe],
      { encoding: 'utf8', timeout: 60_000 },
    );
    return JSON.parse(out.trim().split('\n').at(-1) ?? '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
