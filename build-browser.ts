/**
 * Builds `quorate/browser` (dist/browser.js, docs/websocket.md#browser): one minified ESM file for
 * browsers, from src/browser.ts. Node modules are not allowed in it: the few the client names are
 * swapped for the stand-ins in src/browser-shims/ (and client/transport.ts for
 * transport-browser.ts); any other `node:` module, Node built-in or the `ws` package fails the
 * build, naming the file that imported it. Prints the size, and fails over the budget.
 *
 *   npx tsx build-browser.ts [outdir]     (npm run build runs it after tsup)
 */
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Plugin } from 'esbuild';

const ROOT = dirname(fileURLToPath(import.meta.url));
const SHIMS = join(ROOT, 'src/browser-shims');

/** Minified + gzip budget of dist/browser.js (docs/websocket.md#browser-size). */
export const BROWSER_BUDGET_BYTES = 60 * 1024;

/** Node modules the client names, and what the browser build takes instead. */
const NODE_STAND_INS: Readonly<Record<string, string>> = {
  // the same stand-in as the injected global: src/ may import Buffer explicitly (protocol/receiver.ts)
  'node:buffer': join(SHIMS, 'buffer.ts'),
  'node:crypto': join(SHIMS, 'crypto.ts'),
  'node:diagnostics_channel': join(SHIMS, 'diagnostics-channel.ts'),
};

/** Files of src/ swapped whole (a Node transport for the page's WebSocket). */
const FILE_SWAPS: Readonly<Record<string, string>> = {
  [join(ROOT, 'src/client/transport.ts')]: join(ROOT, 'src/client/transport-browser.ts'),
};

const builtins = new Set(builtinModules);

/** Resolves the stand-ins and swaps; fails on any other Node module or the `ws` package. */
const browserOnly: Plugin = {
  name: 'quorate-browser-only',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const stand = NODE_STAND_INS[args.path];
      if (stand !== undefined) return { path: stand };
      const bare = args.path.replace(/^node:/, '').split('/')[0] ?? '';
      if (args.path.startsWith('node:') || builtins.has(bare) || bare === 'ws')
        return {
          errors: [
            {
              text: `${args.path} imported by ${relative(ROOT, args.importer)}: no Node module may reach the browser build (add a stand-in to build-browser.ts, or keep it out of the browser's import graph)`,
            },
          ],
        };
      if (args.path.startsWith('.')) {
        const target = resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts'));
        const swap = FILE_SWAPS[target];
        if (swap !== undefined) return { path: swap };
      }
      return undefined;
    });
  },
};

export interface BrowserBundle {
  file: string;
  minifiedBytes: number;
  gzipBytes: number;
}

/** Builds dist/browser.js (or into `outdir`); rejects on a Node import or over the budget. */
export async function buildBrowserBundle(outdir = join(ROOT, 'dist')): Promise<BrowserBundle> {
  const file = join(outdir, 'browser.js');
  const result = await build({
    entryPoints: [join(ROOT, 'src/browser.ts')],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    // nothing left for the page to provide: every import is bundled or refused
    external: [],
    inject: [join(SHIMS, 'buffer.ts'), join(SHIMS, 'process.ts')],
    plugins: [browserOnly],
    logLevel: 'silent',
    write: false,
  });
  const out = result.outputFiles.find((f) => f.path === file);
  if (out === undefined) throw new Error('esbuild wrote no browser.js');
  const text = out.text;
  // a last check on the output itself: no import of anything, no require
  const leaked = /\bimport\s*\(|\bfrom\s*["']|\brequire\s*\(/.exec(text);
  if (leaked)
    throw new Error(
      `browser.js still imports something: ...${text.slice(leaked.index, leaked.index + 60)}...`,
    );
  const gzipBytes = gzipSync(out.contents, { level: 9 }).length;
  if (gzipBytes > BROWSER_BUDGET_BYTES)
    throw new Error(`browser.js is ${gzipBytes} bytes min+gzip, over the ${BROWSER_BUDGET_BYTES} budget`);
  const { mkdir, writeFile } = await import('node:fs/promises');
  await mkdir(outdir, { recursive: true });
  await writeFile(file, out.contents);
  return { file, minifiedBytes: out.contents.length, gzipBytes };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const b = await buildBrowserBundle(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
  const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;
  process.stdout.write(
    `quorate/browser: ${relative(ROOT, b.file)} ${kib(b.minifiedBytes)} minified, ${kib(b.gzipBytes)} min+gzip (budget ${kib(BROWSER_BUDGET_BYTES)})\n`,
  );
}
