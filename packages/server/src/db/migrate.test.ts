import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, openTestDb } from '../test-support/db.js';
import { migrate } from './migrate.js';

describe.each(engines())('migrations on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => {
    handle = await openTestDb(engine);
  });
  afterAll(() => handle.close());

  it('creates every table and is a no-op the second time', async () => {
    expect(await migrate(handle.db)).toEqual([]);
    const tables = await handle.db.kysely.introspection.getTables();
    const names = tables.map((table) => table.name);
    for (const table of [
      'merchants',
      'api_keys',
      'cards',
      'vault_cards',
      'webhook_messages',
      'idempotency_keys',
    ]) {
      expect(names).toContain(table);
    }
  });

  it('gives addresses increasing integer ids', async () => {
    const { kysely } = handle.db;
    await sql`insert into shoppers (id, email, email_normalized, first_name, last_name, created_at) values ('shp_1', 'a@b.c', 'a@b.c', 'A', 'B', 1)`.execute(
      kysely,
    );
    const row = (extra: string) => ({
      external_id: extra,
      shopper_id: 'shp_1',
      first_name: 'A',
      last_name: 'B',
      address1: '1 Main St',
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      country: 'US',
      is_default_billing: 0,
      is_default_shipping: 0,
      created_at: 1,
    });
    const first = await kysely
      .insertInto('addresses')
      .values(row('a1'))
      .returning('id')
      .executeTakeFirstOrThrow();
    const second = await kysely
      .insertInto('addresses')
      .values(row('a2'))
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(typeof first.id).toBe('number');
    expect(second.id).toBeGreaterThan(first.id);
  });
});
