import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { until } from '../test-support/wait.js';
import { createDb, type Db } from './index.js';

/** Resolves after `count` turns of the event loop, time enough for anything not held back to settle. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

const createTable = (db: Db) =>
  sql`create table notes (id integer primary key, body text)`.execute(db.kysely);
const count = async (db: Db) => (await db.run<{ n: number }>('select count(*) as n from notes', []))[0]?.n;

describe('SQLite commits and the write-ahead log', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-wal-'));
    file = path.join(dir, 'wallet.db');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a commit once fdatasync of the WAL returned, and runs no statement before (fdatasync held by a fake)', async () => {
    const db = createDb(`sqlite:${file}`);
    try {
      await createTable(db);
      const held: Array<() => void> = [];
      const real = fs.fdatasync;
      vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, done: (error: Error | null) => void) => {
        held.push(() => real(fd, done));
      }) as typeof fs.fdatasync);

      let committed = false;
      let seen: number | undefined;
      let read: Promise<void> | undefined;
      const commit = db.kysely
        .transaction()
        .execute(async (trx) => {
          await trx
            .insertInto('notes' as never)
            .values({ body: 'a' } as never)
            .execute();
          // Issued while the transaction is open: it waits for the commit, and for its flush.
          read = count(db).then((n) => {
            seen = n;
          });
        })
        .then(() => {
          committed = true;
        });
      await turns(10);
      expect(held).toHaveLength(1);
      expect(committed).toBe(false);
      expect(seen).toBeUndefined();

      for (const release of held.splice(0)) release();
      await Promise.all([commit, read]);
      expect(seen).toBe(1);
    } finally {
      await db.close();
    }
  });

  it('flushes a write made outside a transaction before answering it (fdatasync counted by a spy)', async () => {
    const db = createDb(`sqlite:${file}`);
    try {
      await createTable(db);
      const flushes = vi.spyOn(fs, 'fdatasync');
      await db.run('insert into notes (body) values (?)', ['b']);
      expect(flushes).toHaveBeenCalledTimes(1);
      await count(db);
      expect(flushes).toHaveBeenCalledTimes(1);
    } finally {
      await db.close();
    }
  });

  /** Writes about a megabyte in one transaction. */
  const writeMegabyte = (db: Db) =>
    db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 1_000; i++) {
        await trx
          .insertInto('notes' as never)
          .values({ body: 'x'.repeat(1_000) } as never)
          .execute();
      }
    });

  it('never copies the WAL back inside a commit when a worker does it', async () => {
    const db = createDb(`sqlite:${file}`, {
      backgroundCheckpoints: { intervalMs: 60_000, onError: (error) => expect.fail(error.message) },
    });
    try {
      await createTable(db);
      // SQLite's own checkpoint would run inside the commit that takes the WAL past 1,000 pages (4 MiB).
      for (let round = 0; round < 6; round++) await writeMegabyte(db);
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(5 * 1_024 * 1_024);
      expect(fs.statSync(file).size).toBeLessThan(100 * 1_024);
    } finally {
      await db.close();
    }
  });

  it('copies the WAL into the database file from a worker, and reuses the WAL once copied', async () => {
    const errors: Error[] = [];
    const db = createDb(`sqlite:${file}`, {
      backgroundCheckpoints: { intervalMs: 10, onError: (error) => errors.push(error) },
    });
    try {
      await createTable(db);
      const copied = (rows: number) => async () => fs.statSync(file).size > rows * 1_000;
      for (let round = 1; round <= 5; round++) {
        await writeMegabyte(db);
        await until(copied(round * 1_000));
      }
      // Five megabytes went through a WAL that was copied back and reused after each: it holds about one.
      expect(fs.statSync(`${file}-wal`).size).toBeLessThan(3 * 1_024 * 1_024);
      expect(await count(db)).toBe(5_000);
      expect(errors).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
