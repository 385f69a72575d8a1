import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engines, openTestDb } from '../test-support/db.js';
import { batchInsert, batchStatement, chunks, prepared, rowStatement } from './index.js';

const shopper = (id: string) => ({
  id,
  email: `${id}@example.com`,
  email_normalized: `${id}@example.com`,
  phone: null,
  first_name: 'A',
  last_name: 'B',
  created_at: 1,
});

/** Resolves after `turns` turns of the event loop, time enough for anything not blocked to settle. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe.each(engines())('queries and transactions on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => {
    handle = await openTestDb(engine);
  });
  beforeEach(() => handle.db.kysely.deleteFrom('shoppers').execute());
  afterAll(() => handle.close());

  const ids = async () =>
    (await handle.db.kysely.selectFrom('shoppers').select('id').execute()).map((row) => row.id);

  it('never shows a query outside a transaction the rows of one still open, and shows them once committed', async () => {
    const { kysely } = handle.db;
    let seen: string[] | undefined;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = kysely.transaction().execute(async (trx) => {
      await trx.insertInto('shoppers').values(shopper('shp_open')).execute();
      void ids().then((ids) => {
        seen = ids;
      });
      await held;
    });
    await turns(5);
    // On SQLite the read waits for the transaction; on PostgreSQL it runs on another connection and
    // does not see uncommitted rows. Either way it never reports the open transaction's row.
    expect(seen === undefined || seen.length === 0).toBe(true);
    release();
    await transaction;
    expect(await ids()).toEqual(['shp_open']);
  });

  it('never shows the rows of a transaction that rolled back', async () => {
    const { kysely } = handle.db;
    const failed = kysely.transaction().execute(async (trx) => {
      await trx.insertInto('shoppers').values(shopper('shp_gone')).execute();
      await turns(2);
      throw new Error('abandon');
    });
    const during = ids();
    await expect(failed).rejects.toThrow('abandon');
    expect(await during).toEqual([]);
    expect(await ids()).toEqual([]);
  });

  it('throws the error that failed a transaction the database had already ended, not its ROLLBACK’s', async () => {
    const { kysely } = handle.db;
    // SQLite rolls a transaction back itself on a full disk or a disk I/O error, then fails the
    // statement; the raw ROLLBACK stands in for that, the thrown error for the statement's.
    const failed = kysely.transaction().execute(async (trx) => {
      await trx.insertInto('shoppers').values(shopper('shp_gone')).execute();
      await sql`rollback`.execute(trx);
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    });
    await expect(failed).rejects.toMatchObject({ message: 'disk I/O error', code: 'SQLITE_IOERR_WRITE' });
    expect(await ids()).toEqual([]);
    await kysely
      .transaction()
      .execute((trx) => trx.insertInto('shoppers').values(shopper('shp_next')).execute());
    expect(await ids()).toEqual(['shp_next']);
  });

  it('runs a prepared read with each call’s own arguments', async () => {
    const { db } = handle;
    await db.kysely
      .insertInto('shoppers')
      .values([shopper('shp_a'), shopper('shp_b')])
      .execute();
    const byId = prepared(
      db,
      (id: string) => db.kysely.selectFrom('shoppers').select(['id', 'email']).where('id', '=', id),
      [''],
    );
    expect(await byId('shp_b')).toEqual([{ id: 'shp_b', email: 'shp_b@example.com' }]);
    expect(await byId('shp_a')).toEqual([{ id: 'shp_a', email: 'shp_a@example.com' }]);
    expect(await byId('shp_none')).toEqual([]);
  });

  it('refuses a prepared query that does not use its placeholders once each, in order', async () => {
    const { db } = handle;
    const twice = prepared(
      db,
      (id: string) =>
        db.kysely.selectFrom('shoppers').select('id').where('id', '=', id).where('email', '=', id),
      [''],
    );
    await expect(async () => twice('shp_a')).rejects.toThrow(/placeholders/);
  });

  it('writes a batch of every size through a batch insert compiled once per row count', async () => {
    const insert = batchInsert('shoppers', {
      id: true,
      email: true,
      email_normalized: true,
      phone: true,
      first_name: true,
      last_name: true,
      created_at: true,
    });
    const rows = Array.from({ length: 300 }, (_, i) => shopper(`shp_${String(i).padStart(3, '0')}`));
    await handle.db.kysely.transaction().execute((trx) => insert(trx, rows));
    await insert(handle.db.kysely, [{ ...shopper('shp_phone'), phone: '+15125550100' }]);
    const stored = await handle.db.kysely.selectFrom('shoppers').selectAll().orderBy('id').execute();
    expect(stored).toEqual([...rows, { ...shopper('shp_phone'), phone: '+15125550100' }]);
  });

  it('refuses a batch statement that does not use its markers once each, in order', async () => {
    const reversed = batchStatement<{ id: string; email: string }>(
      2,
      (row) => [row.id, row.email],
      (executor, rows) =>
        executor
          .insertInto('shoppers')
          .values(rows.map(([id, email]) => ({ ...shopper('x'), email, id }) as never))
          .compile(),
    );
    await expect(reversed(handle.db.kysely, [{ id: 'shp_x', email: 'x@example.com' }])).rejects.toThrow(
      /markers/,
    );
  });

  it('runs a one-row statement for each row, inside the transaction given', async () => {
    const rename = rowStatement<{ id: string; first: string }>(
      2,
      (row) => [row.first, row.id],
      (executor, [first, id]) =>
        sql`update shoppers set first_name = ${first} where id = ${id}`.compile(executor),
    );
    await handle.db.kysely
      .insertInto('shoppers')
      .values([shopper('shp_a'), shopper('shp_b')])
      .execute();
    await expect(
      handle.db.kysely.transaction().execute(async (trx) => {
        await rename(trx, [
          { id: 'shp_a', first: 'Ada' },
          { id: 'shp_b', first: 'Bo' },
        ]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const names = () =>
      handle.db.kysely.selectFrom('shoppers').select(['id', 'first_name']).orderBy('id').execute();
    expect(await names()).toEqual([
      { id: 'shp_a', first_name: 'A' },
      { id: 'shp_b', first_name: 'A' },
    ]);
    await handle.db.kysely.transaction().execute((trx) =>
      rename(trx, [
        { id: 'shp_a', first: 'Ada' },
        { id: 'shp_b', first: 'Bo' },
      ]),
    );
    expect(await names()).toEqual([
      { id: 'shp_a', first_name: 'Ada' },
      { id: 'shp_b', first_name: 'Bo' },
    ]);
    const swapped = rowStatement<{ id: string; first: string }>(
      2,
      (row) => [row.first, row.id],
      (executor, [first, id]) =>
        sql`update shoppers set first_name = ${id} where id = ${first}`.compile(executor),
    );
    await expect(swapped(handle.db.kysely, [{ id: 'shp_a', first: 'Ada' }])).rejects.toThrow(/markers/);
  });
});

describe('chunks', () => {
  it('splits rows into chunks of 256, 128 … 1 rows, in order', () => {
    const rows = Array.from({ length: 500 }, (_, i) => i);
    const split = chunks(rows);
    expect(split.map((chunk) => chunk.length)).toEqual([256, 128, 64, 32, 16, 4]);
    expect(split.flat()).toEqual(rows);
    expect(chunks([])).toEqual([]);
    expect(chunks(Array.from({ length: 700 }, (_, i) => i)).map((c) => c.length)).toEqual([
      256, 256, 128, 32, 16, 8, 4,
    ]);
  });
});
