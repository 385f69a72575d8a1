import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutAssetRoutes, readCheckoutAssets } from './assets.js';

describe('checkout UI assets', () => {
  let dist: string;

  beforeAll(() => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'checkout-ui-'));
    fs.mkdirSync(path.join(dist, '.vite'));
    const manifest = { 'src/main.tsx': { file: 'main-abc.js', isEntry: true, css: ['main-def.css'] } };
    fs.writeFileSync(path.join(dist, '.vite', 'manifest.json'), JSON.stringify(manifest));
    fs.writeFileSync(path.join(dist, 'main-abc.js'), 'console.log(1)');
    fs.writeFileSync(path.join(dist, 'main-def.css'), 'body{}');
  });
  afterAll(() => fs.rmSync(dist, { recursive: true, force: true }));

  it('finds the entry script and its styles in the Vite manifest', () => {
    expect(readCheckoutAssets(dist)).toEqual({
      scripts: ['/checkout/assets/main-abc.js'],
      styles: ['/checkout/assets/main-def.css'],
    });
    expect(readCheckoutAssets(path.join(dist, 'missing'))).toBeUndefined();
  });

  it('serves the hashed files for a year and never the manifest', async () => {
    const app = Fastify();
    await app.register(checkoutAssetRoutes(dist));
    const script = await app.inject('/checkout/assets/main-abc.js');
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await app.inject('/checkout/assets/.vite/manifest.json')).statusCode).toBe(404);
    await app.close();
  });
});
