import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors.js';
import { errorResponses } from './schemas.js';

/** packages/sdk, from src/api/ here and from dist/api/ once built. */
export const SDK_PACKAGE_DIR = fileURLToPath(new URL('../../../sdk/', import.meta.url));

/** 5 min: merchants' pages pick up a new SDK within minutes; the ETag makes the re-check cheap. */
const LATEST_CACHE = 'public, max-age=300';
/** 1 year: a versioned URL never changes content (the HTTP maximum by convention). */
const VERSIONED_CACHE = 'public, max-age=31536000, immutable';

/** The body as sent: as built, or compressed once when the bundle is loaded. */
interface Encoded {
  /** `Content-Encoding`; undefined for the file as built. */
  encoding: 'br' | 'gzip' | undefined;
  body: Buffer;
  /** A strong ETag names one representation: each encoding has its own. */
  etag: string;
}

interface Bundle {
  /** Best first: Brotli, gzip, then the file as built. */
  forms: [Encoded, Encoded, Encoded];
  version: string;
  /** Subresource Integrity of the file as built, which the browser checks after decoding: `sha384-<base64>`. */
  integrity: string;
}

function bundleOf(body: Buffer, version: string): Bundle {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  const brotli = zlib.brotliCompressSync(body, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY },
  });
  return {
    forms: [
      { encoding: 'br', body: brotli, etag: `"${hash}-br"` },
      { encoding: 'gzip', body: zlib.gzipSync(body, { level: 9 }), etag: `"${hash}-gz"` },
      { encoding: undefined, body, etag: `"${hash}"` },
    ],
    version,
    integrity: `sha384-${createHash('sha384').update(body).digest('base64')}`,
  };
}

/**
 * The form `Accept-Encoding` takes, best first: an encoding it names without `q=0`. A client that names
 * none gets the file as built.
 */
function formFor(bundle: Bundle, acceptEncoding: string | undefined): Encoded {
  const accepted = new Set<string>();
  for (const entry of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name = '', ...parameters] = entry.split(';').map((part) => part.trim());
    const refused = parameters.some((parameter) => /^q=0(?:\.0{0,3})?$/.test(parameter.replace(/\s/g, '')));
    if (!refused) accepted.add(name);
  }
  return (
    bundle.forms.find((form) => form.encoding === undefined || accepted.has(form.encoding)) ?? bundle.forms[2]
  );
}

/**
 * The script-tag SDK, `packages/sdk/dist/wallet-sdk.js` as `npm run build` makes it, read on first use
 * and kept in memory (a new build is served after a restart). Before the SDK is built the routes answer
 * 503 SERVICE_UNAVAILABLE saying so; the file is looked for again on the next request.
 */
async function loadBundle(dir: string): Promise<Bundle> {
  let body: Buffer;
  let manifest: string;
  try {
    [body, manifest] = await Promise.all([
      fs.readFile(path.join(dir, 'dist', 'wallet-sdk.js')),
      fs.readFile(path.join(dir, 'package.json'), 'utf8'),
    ]);
  } catch {
    throw new DomainError(
      'SERVICE_UNAVAILABLE',
      'The browser SDK is not built (packages/sdk/dist/wallet-sdk.js is missing); run npm run build.',
    );
  }
  return bundleOf(body, (JSON.parse(manifest) as { version: string }).version);
}

/** A released version: `x.y.z`, nothing a path could be made of. */
const RELEASED_VERSION = /^\d{1,4}\.\d{1,4}\.\d{1,4}$/;

/**
 * An earlier version's file, kept byte for byte in `packages/sdk/releases/<version>/wallet-sdk.js` so
 * that pages pinned to it by its integrity hash keep working after the service moves to a newer SDK;
 * undefined for a version never released.
 */
async function loadRelease(dir: string, version: string): Promise<Bundle | undefined> {
  if (!RELEASED_VERSION.test(version)) return undefined;
  const body = await fs.readFile(path.join(dir, 'releases', version, 'wallet-sdk.js')).catch(() => undefined);
  return body && bundleOf(body, version);
}

/**
 * Public and sent without credentials, so any page may read it: a script loaded with
 * `crossorigin="anonymous"`, which Subresource Integrity needs for another origin's script, and the
 * manifest fetched by a merchant's build or page.
 */
function publicAsset(reply: FastifyReply, cacheControl: string): FastifyReply {
  return reply.header('cache-control', cacheControl).header('access-control-allow-origin', '*');
}

function send(request: FastifyRequest, reply: FastifyReply, bundle: Bundle, cacheControl: string) {
  const form = formFor(bundle, request.headers['accept-encoding']);
  publicAsset(reply, cacheControl)
    .header('etag', form.etag)
    .header('vary', 'accept-encoding')
    // Loaded by merchants' pages, some of which require cross-origin resources to opt in (COEP).
    .header('cross-origin-resource-policy', 'cross-origin')
    .type('application/javascript; charset=utf-8');
  const match = request.headers['if-none-match'];
  if (match?.split(',').some((tag) => tag.trim() === form.etag || tag.trim() === '*')) {
    return reply.status(304).send();
  }
  if (form.encoding) reply.header('content-encoding', form.encoding);
  return reply.send(form.body);
}

const SdkManifest = Type.Object({
  version: Type.String({ description: 'The SDK version, as `WalletSDK.version` reports it.' }),
  src: Type.String({ description: "The file's URL at that version, cached for good: the one to pin." }),
  integrity: Type.String({
    description: "Its Subresource Integrity hash (`sha384-…`), for the script tag's `integrity` attribute.",
  }),
});

/**
 * `GET /sdk/wallet-sdk.js` (the current SDK, short cache, ETag), `GET /sdk/<version>/wallet-sdk.js`
 * (the file of that version, the current one or an earlier release, cached for good) and
 * `GET /sdk/latest.json` (the current version's URL and integrity hash, to pin it). The merchant id is
 * read by the SDK itself from `?merchantId=` on the script URL.
 */
export const sdkRoutes =
  (options: { dir: string; publicUrl: string }): FastifyPluginAsyncTypebox =>
  async (app) => {
    let loaded: Bundle | undefined;
    const bundle = async () => {
      loaded ??= await loadBundle(options.dir);
      return loaded;
    };
    const releases = new Map<string, Bundle>();
    const schema = { tags: ['Browser SDK'], produces: ['application/javascript'] };

    app.get(
      '/sdk/wallet-sdk.js',
      {
        schema: {
          ...schema,
          operationId: 'getSdkScript',
          summary: 'The browser SDK (script tag)',
          description:
            'Load with `<script src=".../sdk/wallet-sdk.js?merchantId=mch_…">`; defines `window.WalletSDK`. Cached 5 minutes, with an ETag.',
        },
      },
      async (request, reply) => send(request, reply, await bundle(), LATEST_CACHE),
    );

    app.get(
      '/sdk/:version/wallet-sdk.js',
      {
        schema: {
          ...schema,
          operationId: 'getSdkScriptAtVersion',
          summary: 'The browser SDK at a fixed version',
          description:
            'The file of that version, cached for a year (immutable): the current version, or any earlier one released, byte for byte as it was, so that a page pinned to it by its integrity hash keeps working when the service moves to a newer SDK.',
          params: Type.Object({ version: Type.String({ maxLength: 32 }) }),
          response: {
            200: { description: 'The SDK script (`application/javascript`).' },
            ...errorResponses(['VALIDATION_ERROR', 'NOT_FOUND']),
          },
        },
      },
      async (request, reply) => {
        const { version } = request.params;
        // A kept release is served even where the current SDK is not built.
        const release = releases.get(version) ?? (await loadRelease(options.dir, version));
        if (release) {
          releases.set(version, release);
          return send(request, reply, release, VERSIONED_CACHE);
        }
        const current = await bundle();
        if (version !== current.version) {
          throw new DomainError(
            'NOT_FOUND',
            `SDK version ${version} was never released; use /sdk/${current.version}/wallet-sdk.js or /sdk/wallet-sdk.js.`,
          );
        }
        return send(request, reply, current, VERSIONED_CACHE);
      },
    );

    app.get(
      '/sdk/latest.json',
      {
        schema: {
          tags: schema.tags,
          operationId: 'getLatestSdkVersion',
          summary: 'The current SDK version, its pinned URL and its integrity hash',
          description:
            'For a script tag that cannot change under the page: `<script src="{src}" integrity="{integrity}" crossorigin="anonymous" data-merchant-id="mch_…">`. Cached 5 minutes.',
          response: { 200: SdkManifest, ...errorResponses(['SERVICE_UNAVAILABLE']) },
        },
      },
      async (_request, reply) => {
        const current = await bundle();
        publicAsset(reply, LATEST_CACHE);
        return {
          version: current.version,
          src: `${options.publicUrl}/sdk/${current.version}/wallet-sdk.js`,
          integrity: current.integrity,
        };
      },
    );
  };
