import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { testTimeout: 120_000, hookTimeout: 180_000, include: ['test/integration/*.test.ts'], fileParallelism: false } });
