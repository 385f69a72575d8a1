import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CheckoutAssets } from './page.js';

/** packages/checkout-ui/dist, built by the root `npm run build`. */
export const CHECKOUT_UI_DIST = fileURLToPath(new URL('../../../../checkout-ui/dist/', import.meta.url));
const URL_PREFIX = '/checkout/assets/';
/** The manifest key of the UI's entry (packages/checkout-ui/vite.config.ts). */
const ENTRY = 'src/main.tsx';

interface ManifestEntry {
  file: string;
  css?: string[];
}

/**
 * The built checkout UI's files as the page shell loads them, read from Vite's manifest once at start.
 * Undefined when the UI is not built (the page then shows its loading state only).
 */
export function readCheckoutAssets(dist: string = CHECKOUT_UI_DIST): CheckoutAssets | undefined {
  const manifestFile = path.join(dist, '.vite', 'manifest.json');
  if (!fs.existsSync(manifestFile)) return undefined;
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Record<string, ManifestEntry>;
  const entry = manifest[ENTRY];
  if (!entry) return undefined;
  return {
    scripts: [`${URL_PREFIX}${entry.file}`],
    styles: (entry.css ?? []).map((file) => `${URL_PREFIX}${file}`),
  };
}

/**
 * `/checkout/assets/*`: the UI's hashed files, cached for a year (a new build has new names), compressed
 * for a browser that takes Brotli or gzip.
 */
export const checkoutAssetRoutes =
  (dist: string = CHECKOUT_UI_DIST): FastifyPluginAsyncTypebox =>
  async (app) => {
    if (!fs.existsSync(dist)) return;
    await app.register(fastifyStatic, {
      root: dist,
      prefix: URL_PREFIX,
      // Vite's manifest lives in dist/.vite: the server reads it, browsers have no business with it; nor
      // with the compressed files, which come under their file's own name.
      allowedPath: (pathName: string) =>
        !pathName.split('/').some((part) => part.startsWith('.')) && !/\.(?:br|gz)$/.test(pathName),
      index: false,
      // The build's `.br` and `.gz` beside each file (packages/checkout-ui/vite.config.ts), by Accept-Encoding.
      preCompressed: true,
      // Caches keep one copy per encoding.
      setHeaders: (response) => response.setHeader('vary', 'accept-encoding'),
      immutable: true,
      maxAge: '365d',
    });
  };
