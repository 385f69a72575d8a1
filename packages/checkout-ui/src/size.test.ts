import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type Rollup } from 'vite';
import { describe, expect, it } from 'vitest';

/**
 * 30 KB gzipped of JavaScript and CSS together for the first load of the checkout (issue 3 §3): Preact with
 * hooks is about 5.5 KB of it. Built here with the package's own Vite config, in memory (dist is untouched).
 */
const BUDGET_BYTES = 30 * 1024;

describe('the hosted checkout bundle', () => {
  it(`loads within ${BUDGET_BYTES} bytes gzipped (JS + CSS)`, async () => {
    const output = await build({
      configFile: fileURLToPath(new URL('../vite.config.ts', import.meta.url)),
      logLevel: 'silent',
      build: { write: false },
    });
    const results = (Array.isArray(output) ? output : [output]) as Rollup.RollupOutput[];
    const files = results.flatMap((result) => result.output);
    let bytes = 0;
    const sizes: Record<string, number> = {};
    for (const file of files) {
      if (!/\.(js|css)$/.test(file.fileName)) continue;
      const contents = file.type === 'chunk' ? file.code : file.source;
      const gz = gzipSync(contents, { level: 9 }).length;
      sizes[file.fileName] = gz;
      bytes += gz;
    }
    // One entry script and one stylesheet: that is the whole first load.
    expect(Object.keys(sizes).some((name) => name.endsWith('.js'))).toBe(true);
    expect(Object.keys(sizes).some((name) => name.endsWith('.css'))).toBe(true);
    expect(bytes).toBeGreaterThan(5 * 1024);
    expect(bytes, JSON.stringify(sizes)).toBeLessThanOrEqual(BUDGET_BYTES);
  }, 60_000);
});
