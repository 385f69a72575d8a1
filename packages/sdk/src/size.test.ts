import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** 5 KB gzipped: a button, an iframe modal and messaging fit in far less than PayPal's ~110 KB. */
const BUDGET_BYTES = 5 * 1024;

describe('the script-tag bundle', () => {
  it(`stays within ${BUDGET_BYTES} bytes gzipped`, async () => {
    const result = await build({
      entryPoints: [new URL('./global.ts', import.meta.url).pathname],
      bundle: true,
      minify: true,
      format: 'iife',
      target: ['es2019'],
      write: false,
      legalComments: 'none',
    });
    const bytes = gzipSync(result.outputFiles[0]?.contents ?? new Uint8Array()).length;
    expect(bytes).toBeGreaterThan(1000);
    expect(bytes).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
