/** Where the quorate package sits on disk: the monitoring page's assets and the supervisor's member entry are found from it. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This module's file (ESM, tsx or the CJS build). */
export function thisModulePath(): string | undefined {
  // ESM build and tsx: import.meta.url. CJS build: esbuild empties import.meta, __filename exists.
  const url: string | undefined = import.meta.url;
  if (typeof url === 'string' && url.startsWith('file:')) return fileURLToPath(url);
  return typeof __filename === 'string' ? __filename : undefined;
}

/** The directory of the `quorate` package.json above `from`, if any. */
export function findPackageRoot(from: string): string | undefined {
  let dir = dirname(from);
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'quorate') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
