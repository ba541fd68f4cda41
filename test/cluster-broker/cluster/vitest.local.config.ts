import { defineConfig } from 'vitest/config';
// local runs of the cluster integration files without the shared RabbitMQ setup:
//   npx vitest run -c test/cluster-broker/cluster/vitest.local.config.ts
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    include: ['test/integration/cluster-broker/cluster/cluster-*.test.ts'],
    fileParallelism: false,
  },
});
