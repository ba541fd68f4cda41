import { defineConfig } from 'vitest/config';

// Runs integration files one at a time without the shared RabbitMQ global setup (the fuzz and
// limits files do not need it): npx vitest run --config test/fuzz/vitest.local.config.ts <files>
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    include: ['test/integration/**/*.test.ts'],
    fileParallelism: false,
  },
});
