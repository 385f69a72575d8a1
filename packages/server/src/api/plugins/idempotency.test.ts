import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../errors.js';
import { IdempotencyStore } from '../../idempotency/store.js';
import type { Merchant } from '../../merchants/types.js';
import { RateLimitedError } from '../../rate-limits.js';
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
  let credentialsRuns = 0;
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
    // Refused by a rate limit the first time, carried out the second.
    let limited = 0;
    app.post('/limited', { config: { idempotent: 'limited' } }, async () => {
      limited++;
      if (limited === 1) throw new RateLimitedError(7, 'Too many tests; retry in 7 s.');
      return { attempt: limited };
    });
    app.post('/payments/credentials', { config: { idempotent: 'credentials' } }, async () => {
      credentialsRuns++;
      return { run: credentialsRuns };
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app.close();
    await handle.close();
  });

  it('replays an answer a version from before 2026-11-22 saved, under its fingerprint of method, path and body', async () => {
    // As those versions saved it, within the 24 hours before an upgrade.
    const fingerprint = createHash('sha256')
      .update('POST /payments/credentials\n{"amount":2599,"paymentId":"p1"}')
      .digest('base64url');
    const answer = '{"code":200,"message":"OK","requestId":"crq_old"}';
    await store.saveAlone({
      merchantId: 'mch_idem',
      key: 'old-release-1',
      fingerprint,
      status: 200,
      body: answer,
    });
    const send = (body: unknown) =>
      request(`${url}/payments/credentials`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'old-release-1' },
        body: JSON.stringify(body),
      });

    const again = await send({ paymentId: 'p1', amount: 2599 });
    expect([again.statusCode, again.headers['idempotent-replayed'], await again.body.text()]).toEqual([
      200,
      'true',
      answer,
    ]);
    const other = await send({ paymentId: 'p1', amount: 2600 });
    expect(other.statusCode).toBe(409);
    expect(((await other.body.json()) as { errorCode: string }).errorCode).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(credentialsRuns).toBe(0);
  });

  it('keeps no 429: the same key, sent again once the limit allows, is carried out', async () => {
    const send = () =>
      request(`${url}/limited`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'limited-1' },
        body: '{}',
      });
    const refused = await send();
    expect([refused.statusCode, refused.headers['retry-after']]).toEqual([429, '7']);
    await refused.body.dump();
    const again = await send();
    expect([again.statusCode, again.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(await again.body.json()).toEqual({ attempt: 2 });
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

    const repeats = await Promise.all(Array.from({ length: 20 }, () => post()));
    for (const repeat of repeats) {
      expect([repeat.statusCode, repeat.headers['idempotent-replayed']]).toEqual([200, 'true']);
      expect(await repeat.body.json()).toEqual({ run: 1 });
    }
    expect(runs).toBe(1);
  });
});

/**
 * Two apps over one database stand for two processes: each holds the key in its own memory only, so the
 * second learns of the first's answer when its own save of the answer, in its transaction, is refused.
 */
describe.each(engines())('Idempotency-Key across two processes on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  /** Each app's requests wait in `held` until the test releases them. */
  const apps: { app: FastifyInstance; url: string; held: (() => void)[] }[] = [];

  beforeAll(async () => {
    handle = await openTestDb(engine);
    const store = new IdempotencyStore(handle.db);
    for (const name of ['one', 'two']) {
      const app = Fastify();
      app.decorateRequest('merchant', undefined);
      app.addHook('onRequest', async (req) => {
        req.merchant = { id: 'mch_idem2' } as Merchant;
      });
      await app.register(errorsPlugin);
      await app.register(idempotencyPlugin, { store });
      const instance = { app, url: '', held: [] as (() => void)[] };
      const hold = () => new Promise<void>((resolve) => instance.held.push(resolve));
      // A route that saves its answer in its own transaction, as the credentials flow does.
      app.post('/pay', { config: { idempotent: 'pay' } }, async (req, reply) => {
        await hold();
        const answer = req.idempotency?.response(201, { by: name });
        const taken = await handle.db.kysely
          .transaction()
          .execute((trx) => store.save(trx, answer ? [answer] : []));
        if (taken.size > 0) {
          throw new DomainError(
            'IDEMPOTENCY_REQUEST_IN_PROGRESS',
            'A request with this Idempotency-Key is still in progress.',
          );
        }
        return reply.status(201).send({ by: name });
      });
      // A route whose answer the plugin saves after it, in a transaction of its own.
      app.post('/plain', { config: { idempotent: 'plain' } }, async () => {
        await hold();
        return { by: name };
      });
      instance.url = await app.listen({ host: '127.0.0.1', port: 0 });
      apps.push(instance);
    }
  });
  afterAll(async () => {
    for (const { app, held } of apps) {
      for (const release of held) release();
      await app.close();
    }
    await handle.close();
  });

  /** The same request to both apps; the first app's answer is let out first. */
  async function race(path: string, body: unknown) {
    const [one, two] = apps as [(typeof apps)[0], (typeof apps)[0]];
    const send = (url: string) =>
      request(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `both-${path}` },
        body: JSON.stringify(body),
      });
    const first = send(one.url);
    const second = send(two.url);
    await until(async () => one.held.length === 1 && two.held.length === 1);
    one.held.shift()?.();
    const early = await first;
    two.held.shift()?.();
    return { early, late: await second };
  }

  it('gives the later of two racing processes the answer the first one saved', async () => {
    const { early, late } = await race('/pay', { amount: 1 });
    expect(early.statusCode).toBe(201);
    expect([late.statusCode, late.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect(await late.body.json()).toEqual({ by: 'one' });
    expect(late.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('does the same on a route whose answer the plugin saves', async () => {
    const { early, late } = await race('/plain', { amount: 2 });
    expect(await early.body.json()).toEqual({ by: 'one' });
    expect([late.statusCode, late.headers['idempotent-replayed']]).toEqual([200, 'true']);
    expect(await late.body.json()).toEqual({ by: 'one' });
  });
});
