import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { startTestService } from '../test-support/service.js';
import { durabilityWarnings } from './durability.js';
import { createDb } from './index.js';

/** The database's URL with a setting for every connection made with it (libpq's `options`). */
function withSetting(url: string, setting: string): string {
  const withOptions = new URL(url);
  withOptions.searchParams.set('options', `-c ${setting}`);
  return withOptions.toString();
}

describe.each(engines())('durability settings on %s', (engine) => {
  let database: TestDatabase;
  /** fsync and full_page_writes are the server's: the warnings expected for the server the suite runs. */
  let serverWide: string[];

  beforeAll(async () => {
    database = await testDatabase(engine);
    serverWide = [];
    if (engine === 'postgres') {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      for (const setting of ['fsync', 'full_page_writes']) {
        const { rows } = await client.query(`select current_setting('${setting}') as value`);
        if (rows[0].value === 'off') serverWide.push(`PostgreSQL runs with ${setting}=off`);
      }
      await client.end();
    }
  });
  afterAll(() => database.drop());

  const warningsFor = async (url: string) => {
    const db = createDb(url);
    try {
      return await durabilityWarnings(db);
    } finally {
      await db.close();
    }
  };
  const starts = (warnings: string[]) => warnings.map((warning) => warning.split(':')[0]);

  if (engine === 'sqlite') {
    it('has nothing to warn about: the service flushes SQLite itself', async () => {
      expect(await warningsFor(database.url)).toEqual([]);
    });
    return;
  }

  it('warns when commits are reported before they are on disk, naming what to set', async () => {
    const off = await warningsFor(withSetting(database.url, 'synchronous_commit=off'));
    expect(starts(off)).toEqual(['PostgreSQL runs with synchronous_commit=off', ...serverWide]);
    expect(off[0]).toContain('set synchronous_commit=on');
    const on = await warningsFor(withSetting(database.url, 'synchronous_commit=on'));
    expect(starts(on)).toEqual(serverWide);
  });

  it('logs the warnings when the service starts', async () => {
    const url = withSetting(database.url, 'synchronous_commit=off');
    const service = await startTestService(engine, {}, { database: { ...database, url } });
    try {
      const warnings = service.logs
        .flatMap((chunk) => chunk.split('\n'))
        .filter((line) => line.includes('PostgreSQL runs with'))
        .map((line) => JSON.parse(line) as { level: number; msg: string });
      expect(warnings.map((line) => line.level)).toEqual(Array(1 + serverWide.length).fill(40));
      expect(starts(warnings.map((line) => line.msg))[0]).toBe('PostgreSQL runs with synchronous_commit=off');
    } finally {
      await service.close();
    }
  });
});
