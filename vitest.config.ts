import { fileURLToPath } from 'node:url';
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
    // Read by Node only as a process starts, so given to each worker as it is made: the tests' servers
    // answer https and STARTTLS with certificates of this test authority (see test-support/tls.ts), as
    // production's certificate checks require.
    env: {
      NODE_EXTRA_CA_CERTS: fileURLToPath(
        new URL('./packages/server/src/test-support/tls/ca.pem', import.meta.url),
      ),
    },
  },
});
