/**
 * The status page's static files (HTML, JS, CSS: no build step, no CDN), read once when the
 * monitoring server starts. From source they live next to this file in `page/`; the package
 * build copies them to `dist/status-page/`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { findPackageRoot, thisModulePath } from '../files/package-root.js';
import { MonitoringError } from './errors.js';

export interface PageAsset {
  body: Buffer;
  contentType: string;
}

/** URL path -> file name in the page directory. */
const FILES: Record<string, [string, string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/status.js': ['status.js', 'text/javascript; charset=utf-8'],
  '/status.css': ['status.css', 'text/css; charset=utf-8'],
};

export function pageDirectory(): string {
  const here = thisModulePath();
  const root = here === undefined ? undefined : findPackageRoot(here);
  if (root === undefined || here === undefined)
    throw new MonitoringError('cannot locate the quorate package');
  const built = join(root, 'dist', 'status-page');
  const source = join(root, 'src', 'cluster-broker', 'http', 'page');
  const fromDist = here.startsWith(join(root, 'dist') + sep);
  if ((fromDist || !existsSync(source)) && existsSync(built)) return built;
  if (existsSync(source)) return source;
  throw new MonitoringError(`no status page at ${built} or ${source}`);
}

export function loadPageAssets(dir = pageDirectory()): Map<string, PageAsset> {
  const out = new Map<string, PageAsset>();
  for (const [path, [file, contentType]] of Object.entries(FILES)) {
    out.set(path, { body: readFileSync(join(dir, file)), contentType });
  }
  return out;
}
