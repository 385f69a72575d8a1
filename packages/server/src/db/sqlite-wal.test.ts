import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type Finished, runNode } from '../test-support/child.js';
import { until } from '../test-support/wait.js';
import { createDb, type Db } from './index.js';
import { FLUSH_THREAD_STOPPED, WalFlush } from './sqlite-wal.js';
import { isDatabaseUnavailable } from './unavailable.js';

/** Resolves after `count` turns of the event loop, time enough for anything not held back to settle. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
}

const createTable = (db: Db) =>
  sql`create table notes (id integer primary key, body text)`.execute(db.kysely);
const count = async (db: Db) => (await db.run<{ n: number }>('select count(*) as n from notes', []))[0]?.n;

/** This process's open descriptors on `file`; none where /proc is missing (not Linux). */
function descriptorsOn(file: string): string[] {
  if (!fs.existsSync('/proc/self/fd')) return [];
  const targets = fs.readdirSync('/proc/self/fd').map((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return ''; // the descriptor readdir itself used, already closed
    }
  });
  return targets.filter((target) => target.startsWith(file));
}

/**
 * A process that opens the database with its checkpoint worker, writes, closes it and prints `closed`,
 * with nothing else to keep it alive: what a service has left once its sockets are closed.
 */
const CLOSE_ALONE = `
const { createDb } = await import(process.env.DB_MODULE);
const db = createDb('sqlite:' + process.env.DB_FILE, {
  backgroundCheckpoints: { intervalMs: 60000, onError: (error) => { throw error; } },
});
await db.kysely.schema.createTable('notes').addColumn('body', 'text').execute();
await db.run('insert into notes (body) values (?)', ['a']);
await db.close();
process.stdout.write('closed');
`;

function runAlone(file: string): Promise<Finished> {
  // A file, not --eval: the worker inherits the process's flags, and --input-type=module would make its
  // CommonJS program a module.
  const script = path.join(path.dirname(file), 'close-alone.mjs');
  fs.writeFileSync(script, CLOSE_ALONE);
  // 10 s: the process takes well under one.
  return runNode([script], {
    env: { ...process.env, DB_MODULE: fileURLToPath(new URL('./index.ts', import.meta.url)), DB_FILE: file },
    timeoutMs: 10_000,
  });
}

/**
 * Whether every frame of the WAL has been copied into the database file, read from the WAL-index
 * (`-shm`) as SQLite's wal.c lays it out: the header's `mxFrame` (the last valid frame) at byte 16, and
 * the checkpoint's `nBackfill` (frames copied) at byte 96, both in the machine's byte order. Only then
 * does the next write start the WAL again from its beginning: the database file reaching its full size
 * comes earlier, before the checkpoint's last sync, and waiting for that alone let a write in between.
 */
function checkpointed(file: string): boolean {
  const index = fs.readFileSync(`${file}-shm`);
  const read = (offset: number) =>
    os.endianness() === 'LE' ? index.readUInt32LE(offset) : index.readUInt32BE(offset);
  const lastFrame = read(16);
  return lastFrame > 0 && read(96) === lastFrame;
}

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

  it('answers a commit once the flush of the WAL returned, and runs no statement before (the flush held by a fake)', async () => {
    const db = createDb(`sqlite:${file}`);
    try {
      await createTable(db);
      const held: Array<() => void> = [];
      const real = WalFlush.prototype.flush;
      vi.spyOn(WalFlush.prototype, 'flush').mockImplementation(function (this: WalFlush) {
        return new Promise((resolve, reject) => held.push(() => real.call(this).then(resolve, reject)));
      });

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

  it("commits while every thread of libuv's pool is held (by opens of FIFOs nobody writes to)", async () => {
    const db = createDb(`sqlite:${file}`);
    const held: string[] = [];
    const writers: number[] = [];
    // Opened for reading and writing, a FIFO never waits, and lets the held opens through. Also when the
    // test fails on its time-out: the held threads would otherwise stall the files that run after it.
    const release = () => {
      for (const fifo of held.slice(writers.length)) writers.push(fs.openSync(fifo, 'r+'));
    };
    onTestFinished(() => {
      release();
      for (const writer of writers.splice(0)) fs.closeSync(writer);
    });
    try {
      await createTable(db);
      const order: string[] = [];
      // An open of a FIFO for reading waits on the pool's thread until something opens it for writing, as
      // a lookup of a name whose DNS server does not answer waits in getaddrinfo.
      const opens = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE ?? 4) }, (_, i) => {
        const fifo = path.join(dir, `held-${i}`);
        execFileSync('mkfifo', [fifo]);
        held.push(fifo);
        return fs.promises.open(fifo, 'r');
      });
      const canary = fs.promises.stat(file).then(() => order.push('pool free'));

      await db.run('insert into notes (body) values (?)', ['while the pool is held']);
      order.push('committed');
      expect(await count(db)).toBe(1);

      release();
      order.push('released');
      for (const handle of await Promise.all(opens)) await handle.close();
      await canary;
      expect(order).toEqual(['committed', 'released', 'pool free']);
    } finally {
      await db.close();
    }
  });

  it('answers a flush asked before close, then closes', async () => {
    fs.writeFileSync(`${file}-wal`, '');
    const wal = new WalFlush(file);
    const flushed = wal.flush();
    await wal.close();
    await expect(flushed).resolves.toBeUndefined();
  });

  it('rejects, and does not throw, when the WAL cannot be opened', async () => {
    const wal = new WalFlush(path.join(dir, 'missing.db'));
    await expect(wal.flush()).rejects.toMatchObject({ code: 'ENOENT' });
    await wal.close();
  });

  it("fails only the flushes a dead thread held, and the next thread answers its own (the thread's program faked to die once)", async () => {
    fs.writeFileSync(`${file}-wal`, '');
    const died = path.join(dir, 'died');
    // The first thread dies at its first flush; the next one flushes 300 ms slower than the disk, so that
    // the dead thread's 'exit', a turn after its 'error', comes while the next one holds a flush.
    const program = `
      const fs = require('node:fs');
      const { parentPort } = require('node:worker_threads');
      parentPort.on('message', (fd) => {
        if (!fs.existsSync(${JSON.stringify(died)})) {
          fs.writeFileSync(${JSON.stringify(died)}, '');
          throw new Error('the fake flush thread dies');
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
        fs.fdatasyncSync(fd);
        parentPort.postMessage(null);
      });
    `;
    const wal = new WalFlush(file, { program });
    try {
      const stopped = await wal.flush().catch((error: unknown) => error);
      expect(stopped).toMatchObject({ code: FLUSH_THREAD_STOPPED });
      // Not known to be on disk: answered 503, to be retried.
      expect(isDatabaseUnavailable(stopped)).toBe(true);
      await expect(wal.flush()).resolves.toBeUndefined();
      await expect(wal.flush()).resolves.toBeUndefined();
    } finally {
      await wal.close();
    }
  });

  it("fails a flush with fdatasync's own error code, and answers the next one (a WAL on /dev/null)", async () => {
    // fdatasync refuses a device that cannot be synced: EINVAL, from the flush thread.
    fs.symlinkSync('/dev/null', `${file}-wal`);
    const wal = new WalFlush(file);
    try {
      await expect(wal.flush()).rejects.toMatchObject({
        code: 'EINVAL',
        message: expect.stringContaining('fdatasync'),
      });
      await expect(wal.flush()).rejects.toMatchObject({ code: 'EINVAL' });
    } finally {
      await wal.close();
    }
  });

  it('flushes a write made outside a transaction before answering it (flushes counted by a spy)', async () => {
    const db = createDb(`sqlite:${file}`);
    try {
      await createTable(db);
      const flushes = vi.spyOn(WalFlush.prototype, 'flush');
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
      for (let round = 1; round <= 5; round++) {
        await writeMegabyte(db);
        await until(async () => checkpointed(file));
      }
      // Five megabytes went through a WAL that was copied back and reused after each: it holds about one.
      expect(fs.statSync(`${file}-wal`).size).toBeLessThan(3 * 1_024 * 1_024);
      expect(await count(db)).toBe(5_000);
      expect(errors).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('closes with nothing else alive: the worker is waited for, the connection and the WAL closed (own process)', async () => {
    const { code, stdout: out, stderr: err } = await runAlone(file);
    // Node's 13 (unsettled top-level await) if the loop emptied while close waited for the worker.
    expect({ code, out, err }).toEqual({ code: 0, out: 'closed', err: '' });
    // SQLite removes the WAL when the last connection to the database closes.
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('closes the worker, the connection and the WAL descriptor of a database Kysely never queried', async () => {
    const db = createDb(`sqlite:${file}`, {
      backgroundCheckpoints: { intervalMs: 60_000, onError: (error) => expect.fail(error.message) },
    });
    await db.run('create table notes (id integer primary key, body text)', []);
    await db.run('insert into notes (body) values (?)', ['a']);
    expect(descriptorsOn(`${file}-wal`)).not.toEqual([]);
    await db.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    expect(descriptorsOn(`${file}-wal`)).toEqual([]);
    await db.close();
  });
});
