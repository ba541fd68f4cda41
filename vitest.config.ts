import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// `npm test` runs both projects. Pure tests (test/**) run two files at a time; tests that start servers
// (test/integration/**) run one file at a time and share one RabbitMQ node started by the global
// setup. Under CI the JSON reporter also writes .vitest-results.json, which .ci/run counts.
export default defineConfig({
  // The examples import the package by name (`quorate`, `quorate/broker`): the source, as in tsconfig paths.
  resolve: {
    alias: [
      { find: /^quorate$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      { find: /^quorate\/broker$/, replacement: fileURLToPath(new URL('./src/broker.ts', import.meta.url)) },
    ],
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
    projects: [
      {
        extends: true,
        // two files at a time: vitest's default is one fewer than the cores (one on a 2-core machine),
        // which left the unit files, the replication simulation among them, running one by one
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/integration/**'],
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'examples/**/*.test.ts'],
          fileParallelism: false,
          globalSetup: ['test/integration/setup/rabbitmq-global.ts'],
        },
      },
    ],
  },
});
