import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/**
 * The hosted checkout is not an HTML app: the server renders the page shell (packages/server/src/api/checkout/page.ts)
 * and injects the built files it finds in dist/.vite/manifest.json under the key `src/main.tsx`.
 */
export default defineConfig({
  root,
  base: '/checkout/assets/',
  // Preact's automatic JSX runtime, without a plugin.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
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
