import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyStore } from '../../idempotency/store.js';
import type { Merchant } from '../../merchants/types.js';
import { engines, openTestDb } from '../../test-support/db.js';
import { until } from '../../test-support/wait.js';
import { errorsPlugin } from './errors.js';
import { idempotencyPlugin } from './idempotency.js';

/**
 * The plugin in a bare app over a real store, with a route whose answer the test releases: the merchant
 * stands in for the auth plugin (set on every request), which the service's own tests cover.
 */
describe.each(engines())('Idempotency-Key on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let store: IdempotencyStore;
  let app: FastifyInstance;
  let url: string;
  let runs = 0;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    handle = await openTestDb(engine);
    store = new IdempotencyStore(handle.db);
    app = Fastify();
    app.decorateRequest('merchant', undefined);
    app.addHook('onRequest', async (req) => {
      req.merchant = { id: 'mch_idem' } as Merchant;
    });
    await app.register(errorsPlugin);
    await app.register(idempotencyPlugin, { store });
    app.post('/slow', { config: { idempotent: 'slow' } }, async () => {
      runs++;
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { run: runs };
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app.close();
    await handle.close();
  });

  const post = (signal?: AbortSignal) =>
    request(`${url}/slow`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'gone-1' },
      body: '{}',
      signal,
    });

  it('frees the key of a client that hung up once the answer is saved: a retry replays it', async () => {
    const gone = new AbortController();
    const first = post(gone.signal).catch((error: unknown) => error);
    await until(async () => runs === 1);
    gone.abort();
    expect(await first).toBeInstanceOf(Error);

    const meanwhile = await post();
    expect(meanwhile.statusCode).toBe(409);
    expect(await meanwhile.body.json()).toMatchObject({ errorCode: 'IDEMPOTENCY_REQUEST_IN_PROGRESS' });

    release();
    await until(() => store.find('mch_idem', 'gone-1'));
    const retry = await post();
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await retry.body.json()).toEqual({ run: 1 });
    expect(runs).toBe(1);
  });
});
