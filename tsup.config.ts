import { cpSync } from 'node:fs';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    broker: 'src/broker.ts',
    'bin/quorate-broker': 'src/cluster-broker/cli/main.ts',
  },
  format: ['esm', 'cjs'],
  // the client's internals stay out of index.d.ts because it exports interfaces (client/api.ts)
  // browser.d.ts: the declarations of quorate/browser, whose JS build-browser.ts makes (esbuild, no Node)
  dts: { entry: { index: 'src/index.ts', broker: 'src/broker.ts', browser: 'src/browser.ts' } },
  // no source maps: they were 60% of the packed size and point at sources the package does not ship
  sourcemap: false,
  clean: true,
  target: 'node20',
  // shared chunks: one copy of every class across `quorate` and `quorate/broker`, so
  // `instanceof` holds across the entry points (ESM, and CJS with tsup's cjs splitting)
  splitting: true,
  // import.meta.url in CJS (the supervisor finds its worker script by it)
  shims: true,
  // p-retry 7 is ESM-only: bundle it so require('quorate') works from CommonJS.
  noExternal: ['p-retry', 'is-network-error'],
  // The status page is static HTML/JS/CSS served as is (src/cluster-broker/http/page-assets.ts).
  async onSuccess() {
    cpSync('src/cluster-broker/http/page', 'dist/status-page', { recursive: true });
  },
});
