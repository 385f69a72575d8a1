import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, openTestDb } from '../test-support/db.js';
import { insertMerchantRow } from '../test-support/rows.js';
import { Sessions } from './index.js';

describe.each(engines())('Sessions on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let sessions: Sessions;
  beforeAll(async () => {
    handle = await openTestDb(engine);
    sessions = new Sessions(handle.db);
    const { kysely } = handle.db;
    await insertMerchantRow(handle.db, 'mch_1');
    await kysely
      .insertInto('shoppers')
      .values({
        id: 'shp_1',
        email: 'a@b.c',
        email_normalized: 'a@b.c',
        first_name: 'A',
        last_name: 'B',
        created_at: 1,
      })
      .execute();
  });
  afterAll(() => handle.close());

  it('creates a session that is live until its time to live has passed', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const session = await sessions.create({ merchantId: 'mch_1', shopperId: 'shp_1', ttlSeconds: 900, now });
    expect(session).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      merchantId: 'mch_1',
      shopperId: 'shp_1',
      createdAt: now.getTime(),
      expiresAt: now.getTime() + 900_000,
      paymentId: null,
      amountLimit: null,
    });
    expect(await sessions.find(session.id)).toEqual(session);
    const chosen = await sessions.create({
      merchantId: 'mch_1',
      shopperId: 'shp_1',
      ttlSeconds: 900,
      selection: { paymentId: 'card-1', amountLimit: 4505 },
    });
    expect(await sessions.find(chosen.id)).toMatchObject({ paymentId: 'card-1', amountLimit: 4505 });
    expect(sessions.isLive(session, new Date(now.getTime() + 899_999))).toBe(true);
    expect(sessions.isLive(session, new Date(now.getTime() + 900_000))).toBe(false);
  });

  it('defaults to the current time and finds nothing for an unknown id', async () => {
    const before = Date.now();
    const session = await sessions.create({ merchantId: 'mch_1', shopperId: 'shp_1', ttlSeconds: 60 });
    expect(session.createdAt).toBeGreaterThanOrEqual(before);
    expect(sessions.isLive(session, new Date())).toBe(true);
    expect(await sessions.find('00000000-0000-0000-0000-000000000000')).toBeUndefined();
  });
});
