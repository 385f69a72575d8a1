import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * Writes `<file>.br` and `<file>.gz` beside each script and style sheet, compressed once here at their
 * best, which the server sends to browsers that take them (`preCompressed`) instead of compressing on
 * every request.
 */
function precompress(): Plugin {
  return {
    name: 'precompress',
    apply: 'build',
    writeBundle(options, bundle) {
      for (const file of Object.keys(bundle).filter((name) => /\.(?:js|css)$/.test(name))) {
        const full = path.join(options.dir as string, file);
        const body = fs.readFileSync(full);
        const quality = { [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY };
        fs.writeFileSync(`${full}.br`, zlib.brotliCompressSync(body, { params: quality }));
        fs.writeFileSync(`${full}.gz`, zlib.gzipSync(body, { level: 9 }));
      }
    },
  };
}

/**
 * The hosted checkout is not an HTML app: the server renders the page shell (packages/server/src/api/checkout/page.ts)
 * and injects the built files it finds in dist/.vite/manifest.json under the key `src/main.tsx`.
 */
export default defineConfig({
  root,
  base: '/checkout/assets/',
  // Preact's automatic JSX runtime, without a plugin.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  plugins: [precompress()],
  build: {
    outDir: 'dist',
    // Files at the top of dist/, so /checkout/assets/<file> maps straight onto them.
    assetsDir: '',
    emptyOutDir: true,
    manifest: true,
    target: 'es2020',
    // The shell loads one module script; no preload polyfill is needed (and no inline script: the CSP is 'self').
    modulePreload: { polyfill: false },
    rollupOptions: { input: `${root}src/main.tsx` },
  },
});
