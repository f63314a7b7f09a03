import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Two cores: keep parallelism modest so property tests and CLI tests do not starve each other.
    maxWorkers: 2,
    testTimeout: 60_000,
  },
});
