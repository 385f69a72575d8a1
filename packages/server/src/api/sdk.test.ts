import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../test-support/db.js';
import { startTestService, type TestService } from '../test-support/service.js';
import { errorsPlugin } from './plugins/errors.js';
import { ErrorBody } from './schemas.js';
import { SDK_PACKAGE_DIR, sdkRoutes } from './sdk.js';

const BUNDLE = path.join(SDK_PACKAGE_DIR, 'dist', 'wallet-sdk.js');
const VERSION = (
  JSON.parse(fs.readFileSync(path.join(SDK_PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }
).version;

describe.each(engines())('GET /sdk/wallet-sdk.js on %s', (engine) => {
  let service: TestService;

  beforeAll(async () => {
    // The route serves what `npm run build` made; a fresh checkout has not built it yet.
    if (!fs.existsSync(BUNDLE)) execFileSync(process.execPath, ['build.mjs'], { cwd: SDK_PACKAGE_DIR });
    service = await startTestService(engine);
  });
  afterAll(() => service.close());

  it('serves the built SDK as JavaScript, cached 5 minutes with an ETag, whatever the merchantId', async () => {
    const response = await service.call('GET', '/sdk/wallet-sdk.js?merchantId=mch_any');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    expect(response.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.text).toBe(fs.readFileSync(BUNDLE, 'utf8'));
    expect(response.text).toContain('WalletSDK');

    const again = await service.call('GET', '/sdk/wallet-sdk.js', {
      headers: { 'if-none-match': response.headers.etag as string },
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('sends it compressed to a client that takes Brotli or gzip, each form with its own ETag', async () => {
    const built = fs.readFileSync(BUNDLE);
    const decode = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync };
    const etags = new Set<string>();
    for (const [accept, encoding] of [
      ['gzip, deflate, br, zstd', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0, gzip;q=0.5', 'gzip'],
      ['identity', undefined],
    ] as const) {
      const response = await request(`${service.url}/sdk/${VERSION}/wallet-sdk.js`, {
        headers: { 'accept-encoding': accept },
      });
      const body = Buffer.from(await response.body.arrayBuffer());
      expect([accept, response.statusCode, response.headers['content-encoding']]).toEqual([
        accept,
        200,
        encoding,
      ]);
      expect(response.headers.vary).toBe('accept-encoding');
      expect(encoding ? decode[encoding](body).equals(built) : body.equals(built)).toBe(true);
      if (encoding) expect(body.length).toBeLessThan(built.length / 2);
      etags.add(response.headers.etag as string);
      const again = await request(`${service.url}/sdk/${VERSION}/wallet-sdk.js`, {
        headers: { 'accept-encoding': accept, 'if-none-match': response.headers.etag as string },
      });
      await again.body.dump();
      expect(again.statusCode).toBe(304);
    }
    expect(etags.size).toBe(3);
  });

  it('serves the same file under its version, immutable for a year', async () => {
    const latest = await service.call('GET', '/sdk/wallet-sdk.js');
    const versioned = await service.call('GET', `/sdk/${VERSION}/wallet-sdk.js`);
    expect(versioned.status).toBe(200);
    expect(versioned.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(versioned.text).toBe(latest.text);
  });

  it('lets any page read it, as a script tag that checks its integrity must (crossorigin="anonymous")', async () => {
    for (const route of ['/sdk/wallet-sdk.js', `/sdk/${VERSION}/wallet-sdk.js`]) {
      const response = await service.call('GET', route, { headers: { origin: 'https://shop.example' } });
      expect({ route, allowed: response.headers['access-control-allow-origin'] }).toEqual({
        route,
        allowed: '*',
      });
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('names the version to pin and its Subresource Integrity hash in /sdk/latest.json', async () => {
    const response = await service.call('GET', '/sdk/latest.json');
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    expect(response.headers['access-control-allow-origin']).toBe('*');
    const digest = createHash('sha384').update(fs.readFileSync(BUNDLE)).digest('base64');
    expect(response.json).toEqual({
      version: VERSION,
      src: `${service.services.config.publicUrl}/sdk/${VERSION}/wallet-sdk.js`,
      integrity: `sha384-${digest}`,
    });
    const pinned = await service.call('GET', `/sdk/${VERSION}/wallet-sdk.js`);
    expect(`sha384-${createHash('sha384').update(pinned.text).digest('base64')}`).toBe(
      response.json.integrity,
    );
  });

  it('serves every earlier release byte for byte, with the integrity hash it was released with', async () => {
    const released = JSON.parse(
      fs.readFileSync(path.join(SDK_PACKAGE_DIR, 'versions.json'), 'utf8'),
    ) as Record<string, string>;
    const earlier = Object.keys(released).filter((version) => version !== VERSION);
    expect(earlier).toContain('0.1.0');
    for (const version of earlier) {
      const response = await service.call('GET', `/sdk/${version}/wallet-sdk.js`);
      expect(response.status).toBe(200);
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(response.headers['content-type']).toBe('application/javascript; charset=utf-8');
      expect(`sha384-${createHash('sha384').update(response.text).digest('base64')}`).toBe(released[version]);
      expect(response.text).toContain(`"${version}"`);
    }
  });

  it.each(['0.0.1', '..%2F..%2Fpackage.json', '0.1.0%2F..%2F..%2Fpackage'])(
    'answers %s, never released, with 404 naming the current version',
    async (version) => {
      const response = await service.call('GET', `/sdk/${version}/wallet-sdk.js`);
      expect(response.status).toBe(404);
      expect(response.json).toEqual({
        errorCode: 'NOT_FOUND',
        errorMessage: `SDK version ${decodeURIComponent(version)} was never released; use /sdk/${VERSION}/wallet-sdk.js or /sdk/wallet-sdk.js.`,
      });
    },
  );
});

/** The SDK routes alone, over HTTP, serving the package folder `dir`. */
async function sdkApp(dir: string) {
  const app = Fastify();
  await app.register(errorsPlugin);
  app.addSchema(ErrorBody);
  await app.register(sdkRoutes({ dir, publicUrl: 'https://wallet.example' }));
  return { app, url: await app.listen({ port: 0, host: '127.0.0.1' }) };
}

describe('GET /sdk/wallet-sdk.js before the SDK is built', () => {
  it.each(['/sdk/wallet-sdk.js', '/sdk/latest.json'])(
    'answers 503 at %s saying how to build it',
    async (route) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-sdk-'));
      const { app, url } = await sdkApp(dir);
      try {
        const response = await request(`${url}${route}`);
        expect([response.statusCode, response.headers['retry-after']]).toEqual([503, '5']);
        expect(await response.body.json()).toEqual({
          errorCode: 'SERVICE_UNAVAILABLE',
          errorMessage:
            'The browser SDK is not built (packages/sdk/dist/wallet-sdk.js is missing); run npm run build.',
        });
      } finally {
        await app.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('serves a kept release all the same', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-sdk-'));
    fs.mkdirSync(path.join(dir, 'releases', '0.1.0'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'releases', '0.1.0', 'wallet-sdk.js'), 'window.WalletSDK = {};');
    const { app, url } = await sdkApp(dir);
    try {
      const response = await request(`${url}/sdk/0.1.0/wallet-sdk.js`);
      expect(response.statusCode).toBe(200);
      expect(await response.body.text()).toBe('window.WalletSDK = {};');
    } finally {
      await app.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
