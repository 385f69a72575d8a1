import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, openTestDb } from '../test-support/db.js';
import { IDEMPOTENCY_TTL_MS, IdempotencyStore, type StoredResponse } from './store.js';

describe.each(engines())('IdempotencyStore on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let now = 1_000_000;
  let store: IdempotencyStore;
  const answer = (key: string, body = '{"code":200}'): StoredResponse => ({
    merchantId: 'mch_1',
    key,
    fingerprint: 'f1',
    status: 200,
    body,
  });

  beforeAll(async () => {
    handle = await openTestDb(engine);
    store = new IdempotencyStore(handle.db, () => now);
  });
  afterAll(() => handle.close());

  it('keeps the first answer and reports later ones for the same key as taken', async () => {
    const taken = await handle.db.kysely.transaction().execute((trx) => store.save(trx, [answer('a')]));
    expect(taken.size).toBe(0);
    const again = await handle.db.kysely
      .transaction()
      .execute((trx) => store.save(trx, [answer('a', '{"other":1}'), answer('b')]));
    expect([...again]).toEqual(['mch_1\na']);
    expect((await store.find('mch_1', 'a'))?.body).toBe('{"code":200}');
    expect(await store.find('mch_2', 'a')).toBeUndefined();
  });

  it('forgets a key after 24 hours and lets it be used again', async () => {
    await store.saveAlone(answer('c'));
    now += IDEMPOTENCY_TTL_MS - 1;
    expect(await store.find('mch_1', 'c')).toBeDefined();
    now += 1;
    expect(await store.find('mch_1', 'c')).toBeUndefined();
    const taken = await handle.db.kysely
      .transaction()
      .execute((trx) => store.save(trx, [answer('c', '{"second":true}')]));
    expect(taken.size).toBe(0);
    expect((await store.find('mch_1', 'c'))?.body).toBe('{"second":true}');
  });

  it('sweeps expired keys', async () => {
    now += IDEMPOTENCY_TTL_MS;
    expect(await store.sweep()).toBeGreaterThan(0);
    expect(await handle.db.kysely.selectFrom('idempotency_keys').selectAll().execute()).toEqual([]);
  });
});
