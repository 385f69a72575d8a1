import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../test-support/cli.js';
import { engines, openTestDb, testDatabase } from '../test-support/db.js';
import { DatabaseAccessError } from './access.js';
import { createDb } from './index.js';
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

  describe('a database a newer version migrated', () => {
    const record = (name: string) =>
      sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
        handle.db.kysely,
      );
    const forget = (name: string) =>
      sql`delete from kysely_migration where name = ${name}`.execute(handle.db.kysely);

    it('runs on it, warning once, when the migrations it does not have are newer than its own', async () => {
      await record('999_from_a_newer_version');
      try {
        const warnings: string[] = [];
        expect(await migrate(handle.db, (warning) => warnings.push(warning))).toEqual([]);
        expect(warnings).toEqual([
          'the database was migrated by a newer version (999_from_a_newer_version); this version runs on it, as migrations only add, until that version replaces it',
        ]);
        // The command line says so too, and works.
        const listed = await runCli({ DATABASE_URL: handle.url, DATA_DIR: handle.dataDir }, [
          'merchant',
          'list',
          '--json',
        ]);
        expect(listed.code).toBe(0);
        expect(listed.stderr).toContain(
          'warning: the database was migrated by a newer version (999_from_a_newer_version)',
        );
        // `serve` leaves the warning to the service's log rather than saying it twice.
        const served = await runCli(
          { DATABASE_URL: handle.url, DATA_DIR: handle.dataDir, PORT: '0', LOG_LEVEL: 'silent' },
          ['serve'],
          { waitForStop: async () => 'SIGTERM' },
        );
        expect(served.code).toBe(0);
        expect(served.stderr).toContain('SIGTERM: stopping');
        expect(served.stderr).not.toContain('migrated by a newer version');
      } finally {
        await forget('999_from_a_newer_version');
      }
    });

    it('refuses one it does not have that is older than its own last', async () => {
      await record('005a_from_another_line');
      try {
        await expect(migrate(handle.db)).rejects.toThrow(
          /migrations this version does not have, older than its last \(\d{3}_\w+\): 005a_from_another_line$/,
        );
      } finally {
        await forget('005a_from_another_line');
      }
      expect(await migrate(handle.db)).toEqual([]);
    });
  });
});

describe.each(engines())('two processes migrating a new database at once on %s', (engine) => {
  it('migrates it once, each process finding it done or doing it whole', async () => {
    const database = await testDatabase(engine);
    const [first, second] = [createDb(database.url), createDb(database.url)];
    try {
      const applied = await Promise.all([migrate(first), migrate(second)]);
      const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(first.kysely);
      const names = rows.rows.map((row) => row.name).sort();
      expect(names.length).toBeGreaterThan(20);
      // Each migration applied by one of them, once.
      expect(applied.flat().sort()).toEqual(names);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await database.drop();
    }
  });
});

describe('migrations on a SQLite file another program keeps locked', () => {
  it('stop naming DATABASE_URL and the lock, once the busy time-out has passed', async () => {
    const database = await testDatabase('sqlite');
    const file = database.url.slice('sqlite:'.length);
    const ready = createDb(database.url);
    await migrate(ready);
    await ready.close();
    const holder = new SQLite(file);
    holder.exec('begin immediate');
    const db = createDb(database.url, { busyTimeoutMs: 200 });
    try {
      const failure = await migrate(db).catch((error: Error) => error);
      expect(failure).toBeInstanceOf(DatabaseAccessError);
      expect((failure as Error).message).toBe(
        `DATABASE_URL: cannot use the SQLite file ${path.resolve(file)}: the migrations failed: database is locked`,
      );
    } finally {
      holder.exec('rollback');
      holder.close();
      await db.close();
      await database.drop();
    }
  });
});
