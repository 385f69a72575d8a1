/**
 * Test databases on both engines. `engines()` lists the engines this run covers; `testDatabase(engine)`
 * makes a fresh, migrated database for one test file (a temporary SQLite file, or a new PostgreSQL
 * database on the suite's server) and drops it afterwards.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { createDb, type Db, type Engine } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { randomToken } from '../ids.js';

export function engines(): Engine[] {
  return inject('postgresUrl') ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface TestDatabase {
  url: string;
  /** A fresh folder for this database's data (vault keys, SQLite files). */
  dataDir: string;
  drop(): Promise<void>;
}

export async function testDatabase(engine: Engine): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-test-'));
  if (engine === 'sqlite') {
    return {
      url: `sqlite:${path.join(dataDir, 'wallet.db')}`,
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const adminUrl = inject('postgresUrl');
  if (!adminUrl) throw new Error('no PostgreSQL server for this run');
  const name = `wallet_test_${randomToken(12).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A fresh migrated database opened with Kysely; call `close()` in afterAll. */
export async function openTestDb(
  engine: Engine,
): Promise<{ db: Db; url: string; dataDir: string; close(): Promise<void> }> {
  const database = await testDatabase(engine);
  const db = createDb(database.url);
  await migrate(db);
  return {
    db,
    url: database.url,
    dataDir: database.dataDir,
    async close() {
      await db.close();
      await database.drop();
    },
  };
}
