import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../test-support/wait.js';
import { openSqlite, type SqliteAccess } from './sqlite.js';

describe('SQLite: a lock held by another program', () => {
  let dir: string;
  let file: string;
  let access: SqliteAccess;
  /** The other program: a second connection to the file, holding the write lock. */
  let holder: SQLite.Database;

  const open = (busyTimeoutMs?: number) => {
    access = openSqlite(file, { busyTimeoutMs });
    return access;
  };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-busy-'));
    file = path.join(dir, 'wallet.db');
    await open().run('create table notes (text text not null)', []);
    holder = new SQLite(file);
    holder.exec('begin immediate');
  });

  afterEach(async () => {
    if (holder.inTransaction) holder.exec('rollback');
    holder.close();
    await access.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Resolves once the event loop has run `count` timers: the loop was free meanwhile. */
  const timersRun = async (count: number) => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    try {
      await until(async () => ticks >= count);
    } finally {
      clearInterval(ticker);
    }
  };

  it('waits for it on timers, so the event loop goes on, and writes once it is let go', async () => {
    let written = false;
    const write = access.run('insert into notes (text) values (?)', ['after the lock']).then(() => {
      written = true;
    });
    await timersRun(20);
    expect(written).toBe(false);
    holder.exec('commit');
    await write;
    expect(await access.run('select text from notes', [])).toEqual([{ text: 'after the lock' }]);
  });

  it('answers reads meanwhile', async () => {
    const write = access.run('insert into notes (text) values (?)', ['waiting']);
    expect(await access.run('select count(*) as n from notes', [])).toEqual([{ n: 0 }]);
    holder.exec('commit');
    await write;
  });

  it('fails with SQLITE_BUSY once the busy time-out has passed', async () => {
    await access.close();
    const started = performance.now();
    await expect(open(200).run('insert into notes (text) values (?)', ['never'])).rejects.toMatchObject({
      code: 'SQLITE_BUSY',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
  });

  /** Whether the write has failed before the event loop's next turn: without waiting at all. */
  const failsAtOnce = (write: Promise<unknown>) =>
    Promise.race([
      write.then(
        () => 'written',
        () => 'failed',
      ),
      new Promise((resolve) => setImmediate(() => resolve('waiting'))),
    ]);

  it('fails a write at once while the lock is still held past the busy time-out, not after its own', async () => {
    await access.close();
    open(200);
    await expect(access.run('insert into notes (text) values (?)', ['first'])).rejects.toMatchObject({
      code: 'SQLITE_BUSY',
    });
    const second = access.run('insert into notes (text) values (?)', ['second']);
    expect(await failsAtOnce(second)).toBe('failed');
    await expect(second).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
  });

  it('counts a lock found held again after a second unseen as a new hold', async () => {
    await access.close();
    open(200);
    await expect(access.run('insert into notes (text) values (?)', ['first'])).rejects.toThrow();
    // Let go and taken again by the other program while no statement of ours looked.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const started = performance.now();
    const again = access.run('insert into notes (text) values (?)', ['again']);
    expect(await failsAtOnce(again)).toBe('waiting');
    await expect(again).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('gives each write its whole busy time-out again once a write has taken the lock', async () => {
    await access.close();
    open(200);
    await expect(access.run('insert into notes (text) values (?)', ['before'])).rejects.toMatchObject({
      code: 'SQLITE_BUSY',
    });
    holder.exec('commit');
    await access.run('insert into notes (text) values (?)', ['between']);
    holder.exec('begin immediate');
    const started = performance.now();
    await expect(access.run('insert into notes (text) values (?)', ['after'])).rejects.toMatchObject({
      code: 'SQLITE_BUSY',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('starts a transaction only once the lock is free, answering other statements meanwhile', async () => {
    const db = new Kysely<{ notes: { text: string } }>({ dialect: access.dialect });
    let written = false;
    const transaction = db
      .transaction()
      .execute(async (trx) => {
        await trx.executeQuery(CompiledQuery.raw("insert into notes (text) values ('in a transaction')"));
      })
      .then(() => {
        written = true;
      });
    await new Promise((resolve) => setImmediate(resolve));
    expect(await access.run('select count(*) as n from notes', [])).toEqual([{ n: 0 }]);
    await timersRun(20);
    expect(written).toBe(false);
    holder.exec('commit');
    await transaction;
    expect(await access.run('select text from notes', [])).toEqual([{ text: 'in a transaction' }]);
  });
});
