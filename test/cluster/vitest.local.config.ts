import { defineConfig } from 'vitest/config';
// local runs of the cluster's integration files without the shared RabbitMQ setup (not committed)
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    include: ['test/integration/cluster-*.test.ts'],
    fileParallelism: false,
  },
});
