import { defineConfig } from 'vitest/config';

// Tests that start servers (brokers, clusters, RabbitMQ) live in test/integration and run one
// file at a time; pure tests run in parallel. Both run with `npm test`.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/integration/**'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
