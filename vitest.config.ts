import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // One module graph for every file of a worker instead of one per file: collecting the suite took
    // 66-93 s of a 10-13 min run, and takes about 13 s so. Tests keep their state in their own files
    // and close what they open, so nothing carries from one file to the next.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
