import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT_UI_DIST, checkoutAssetRoutes, readCheckoutAssets } from './assets.js';

describe('checkout UI assets', () => {
  let dist: string;

  beforeAll(() => {
    dist = fs.mkdtempSync(path.join(os.tmpdir(), 'checkout-ui-'));
    fs.mkdirSync(path.join(dist, '.vite'));
    const manifest = { 'src/main.tsx': { file: 'main-abc.js', isEntry: true, css: ['main-def.css'] } };
    fs.writeFileSync(path.join(dist, '.vite', 'manifest.json'), JSON.stringify(manifest));
    fs.writeFileSync(path.join(dist, 'main-abc.js'), 'console.log(1)');
    fs.writeFileSync(path.join(dist, 'main-def.css'), 'body{}');
    fs.writeFileSync(path.join(dist, 'main-abc.js.br'), zlib.brotliCompressSync('console.log(1)'));
    fs.writeFileSync(path.join(dist, 'main-abc.js.gz'), zlib.gzipSync('console.log(1)'));
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

  it('sends the compressed file beside one to a browser that takes it', async () => {
    const app = Fastify();
    await app.register(checkoutAssetRoutes(dist));
    const fetched = (acceptEncoding: string) =>
      app.inject({ url: '/checkout/assets/main-abc.js', headers: { 'accept-encoding': acceptEncoding } });
    const brotli = await fetched('gzip, deflate, br, zstd');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers.vary).toBe('accept-encoding');
    expect(zlib.brotliDecompressSync(brotli.rawPayload).toString()).toBe('console.log(1)');
    const gzip = await fetched('gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gzip.rawPayload).toString()).toBe('console.log(1)');
    const plain = await fetched('identity');
    expect([plain.headers['content-encoding'], plain.payload]).toEqual([undefined, 'console.log(1)']);
    expect(plain.headers.vary).toBe('accept-encoding');
    expect((await app.inject('/checkout/assets/main-abc.js.br')).statusCode).toBe(404);
    await app.close();
  });

  it('has every file of the built UI compressed beside it by the build, as Brotli and gzip', () => {
    const built = readCheckoutAssets(CHECKOUT_UI_DIST);
    if (!built) throw new Error(`the checkout UI is not built in ${CHECKOUT_UI_DIST}: run npm run build`);
    for (const url of [...built.scripts, ...built.styles]) {
      const file = path.join(CHECKOUT_UI_DIST, url.slice('/checkout/assets/'.length));
      const body = fs.readFileSync(file);
      expect(zlib.brotliDecompressSync(fs.readFileSync(`${file}.br`)).equals(body)).toBe(true);
      expect(zlib.gunzipSync(fs.readFileSync(`${file}.gz`)).equals(body)).toBe(true);
    }
  });
});
