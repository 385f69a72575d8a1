import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The browser benchmark runs under Vitest because the harness it drives (test/e2e/support.ts) is built on
 * it. Not part of `npm test`: the root config takes `*.test.ts` only.
 */
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['test/bench/browser.ts'],
    pool: 'forks',
    // The figures print as they are measured, not as captured test output.
    disableConsoleIntercept: true,
    testTimeout: 30 * 60_000,
    hookTimeout: 60_000,
  },
});
