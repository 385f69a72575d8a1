/**
 * The SQLite dialect: Kysely's compiler, adapter and introspector over our own driver for the one
 * better-sqlite3 connection.
 *
 * Kysely's driver lends the connection to one caller at a time, from acquisition to release, and wakes
 * every waiting caller on each release (all but one go back to waiting). With a few hundred deliveries
 * in flight, each reading a handful of rows, a release cost hundreds of wake-ups, and every point read
 * waited behind the others. better-sqlite3 runs each statement synchronously, so a statement outside a
 * transaction needs no turn at all: this driver runs it at once, unless another caller's transaction is
 * open, and only transactions take turns, first come first served.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { createPrivateFile, makeFolders, reasonOf } from '../files.js';
import { DatabaseAccessError } from './access.js';
import { Checkpointer, WalFlush } from './sqlite-wal.js';

/** Prepared statements kept; multi-row inserts of different sizes are distinct statements. */
const STATEMENT_CACHE_SIZE = 500;

export interface SqliteOptions {
  /** How long a statement waits for a lock another program holds before it fails (`SQLITE_BUSY`). */
  busyTimeoutMs?: number;
  /**
   * Checkpoint the WAL in a worker thread instead of inside the commit that crosses SQLite's mark (see
   * sqlite-wal.ts): for the long-running service. Short-lived commands leave it to SQLite.
   */
  backgroundCheckpoints?: { intervalMs: number; onError(error: Error): void };
}

export function openSqlite(file: string, options: SqliteOptions = {}): SqliteAccess {
  const connection = openFile(file);
  // NORMAL: commits write the WAL without syncing it; the driver syncs it before it reports a commit
  // (WalFlush), so an acknowledgement sent after a commit survives a crash of the process or of the
  // machine, as with FULL, without the fsync stopping the event loop.
  connection.pragma('synchronous = NORMAL');
  // SQLite's busy handler would sleep the main thread while another program holds the lock; the driver
  // tries again on timers instead, so the process goes on answering what does not need that lock.
  connection.pragma('busy_timeout = 0');
  connection.pragma('foreign_keys = ON');
  // 64 MiB of page cache instead of SQLite's 2 MiB: the webhook deliveries' point reads then find their
  // pages in memory rather than asking the kernel for them.
  connection.pragma('cache_size = -65536');
  const onDisk = !connection.memory;
  const checkpointer =
    onDisk && options.backgroundCheckpoints
      ? new Checkpointer(connection.name, options.backgroundCheckpoints)
      : undefined;
  if (checkpointer) {
    connection.pragma('wal_autocheckpoint = 0');
    // After a checkpoint the WAL is reused from its start; this trims a file that grew under load.
    connection.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  }
  return sqliteAccess(
    connection,
    onDisk ? new WalFlush(connection.name) : undefined,
    checkpointer,
    options.busyTimeoutMs ?? BUSY_TIMEOUT_MS,
  );
}

/**
 * The database file in WAL mode, made with its folders if need be (for their owner only); one that cannot
 * be made, opened or written is named, with the reason.
 */
function openFile(file: string): SQLite.Database {
  let connection: SQLite.Database | undefined;
  try {
    if (file !== ':memory:' && !fs.existsSync(file)) {
      makeFolders(path.dirname(path.resolve(file)));
      // SQLite gives the WAL and shared-memory files the database file's mode.
      try {
        createPrivateFile(file);
      } catch (error) {
        // Another process starting at the same moment made it first.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    // A file already in WAL mode opens, and switches to it, without a write: one this user may only
    // read would fail at the first request instead.
    if (file !== ':memory:') {
      for (const part of [file, `${file}-wal`, `${file}-shm`]) {
        if (fs.existsSync(part)) fs.accessSync(part, fs.constants.R_OK | fs.constants.W_OK);
      }
    }
    connection = new SQLite(file);
    connection.pragma('journal_mode = WAL');
    return connection;
  } catch (error) {
    connection?.close();
    throw new DatabaseAccessError(`the SQLite file ${path.resolve(file)}`, reasonOf(error));
  }
}

/** What the WAL file is trimmed to once it is reused. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** Every transaction's start; see `beginTransaction`. */
const BEGIN = 'begin immediate';

/** 5 s: how long a statement waits for a lock held by another program, as SQLite's busy time-out did. */
const BUSY_TIMEOUT_MS = 5_000;

/** The pauses between tries of a statement that found the database locked: SQLite's own, 100 ms after. */
const BUSY_DELAYS_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];

/**
 * 1 s without a statement finding the lock held (ten of the longest pauses): it may have been let go
 * meanwhile, so the next time it is found held counts as a new hold.
 */
const LOCK_SEEN_GAP_MS = 1_000;

/** A hold of the lock by another program, as statements found it: since when, and when last. */
interface LockSeen {
  since: number;
  last: number;
}

/** A statement that found the database locked: since when it has tried, and how often. */
interface BusyWait {
  since: number;
  tries: number;
}

interface Waiting {
  handle: Handle;
  query: CompiledQuery;
  busy: BusyWait | undefined;
  resolve(result: Promise<QueryResult<unknown>>): void;
  reject(error: unknown): void;
}

/** What Kysely gets for each acquisition: the connection, and who it is, to tell transactions apart. */
class Handle implements DatabaseConnection {
  readonly #driver: SqliteDriver;

  constructor(driver: SqliteDriver) {
    this.#driver = driver;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.execute(this, query) as Promise<QueryResult<R>>;
  }

  // biome-ignore lint/correctness/useYield: the interface asks for a generator; nothing here streams.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported on SQLite');
  }
}

class SqliteDriver implements Driver {
  readonly #connection: SQLite.Database;
  /** Undefined for an in-memory database, which has nothing to flush. */
  readonly #wal: WalFlush | undefined;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #statements = new Map<string, SQLite.Statement>();
  /** The handle whose transaction is open; undefined between transactions. */
  #owner: Handle | undefined;
  /** Something was written since the last flush. */
  #unflushed = false;
  /** The owner while a commit is being flushed: nothing else reads or writes until it is on disk. */
  readonly #flushing = new Handle(this);
  /** Statements of other handles that arrived while a transaction was open, in arrival order. */
  readonly #waiting: Waiting[] = [];
  #destroyed: Promise<void> | undefined;

  readonly #busyTimeoutMs: number;
  /**
   * The hold statements are finding, undefined once a write has taken the lock since: every statement that
   * finds it held counts its busy time-out from its start, so one lock held past the time-out does not keep
   * each statement that comes meanwhile waiting another time-out of its own.
   */
  #lockSeen: LockSeen | undefined;

  constructor(
    connection: SQLite.Database,
    wal: WalFlush | undefined,
    checkpointer: Checkpointer | undefined,
    busyTimeoutMs: number,
  ) {
    this.#connection = connection;
    this.#wal = wal;
    this.#checkpointer = checkpointer;
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Handle(this);
  }

  async releaseConnection(): Promise<void> {}

  /**
   * IMMEDIATE: the write lock is taken at the start, so a lock held by another program makes the BEGIN
   * wait, before the transaction is open and while other statements still run, never a write inside it.
   */
  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(BEGIN));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // SQLite ends a transaction itself on some errors (a full disk, a disk I/O error): its ROLLBACK
    // would then fail with "no transaction is active", an error Kysely throws in place of the one that
    // says what went wrong (and so a 500 in place of the 503 an unreachable database answers).
    if (this.#owner !== connection) return;
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  /**
   * Called by Kysely, which does so only once it has run a query itself, and by `SqliteAccess.close` for a
   * database used through `run` alone; the second call waits for the first.
   */
  destroy(): Promise<void> {
    this.#destroyed ??= this.#close();
    return this.#destroyed;
  }

  async #close(): Promise<void> {
    // The worker first: the main connection, closed last, then removes the WAL.
    await this.#checkpointer?.close();
    this.#connection.close();
    await this.#wal?.close();
  }

  /** Runs the statement now, or, while another handle's transaction is open, once it has ended. */
  execute(handle: Handle, query: CompiledQuery, busy?: BusyWait): Promise<QueryResult<unknown>> {
    if (this.#owner !== undefined && this.#owner !== handle) {
      return new Promise((resolve, reject) => this.#waiting.push({ handle, query, busy, resolve, reject }));
    }
    try {
      return this.#try(handle, query, busy);
    } finally {
      if (this.#owner === undefined) this.#drain();
    }
  }

  /** Runs waiting statements in order until one of them opens a transaction or ends a write. */
  #drain(): void {
    while (this.#owner === undefined && this.#waiting.length > 0) {
      const next = this.#waiting.shift() as Waiting;
      next.resolve(this.#try(next.handle, next.query, next.busy));
    }
  }

  /**
   * Runs the statement; one that found the database locked by another program is tried again after a
   * pause, through `execute` (another handle's transaction may have begun meanwhile), until the busy
   * time-out has passed since the lock was first found held.
   */
  #try(handle: Handle, query: CompiledQuery, busy: BusyWait | undefined): Promise<QueryResult<unknown>> {
    try {
      return this.#run(handle, query);
    } catch (error) {
      if (!isLocked(error)) return Promise.reject(error);
      const now = performance.now();
      if (this.#lockSeen === undefined || now - this.#lockSeen.last > LOCK_SEEN_GAP_MS) {
        this.#lockSeen = { since: now, last: now };
      }
      this.#lockSeen.last = now;
      const since = Math.min(busy?.since ?? now, this.#lockSeen.since);
      if (now - since >= this.#busyTimeoutMs) return Promise.reject(error);
      const tries = busy?.tries ?? 0;
      const pause = BUSY_DELAYS_MS[Math.min(tries, BUSY_DELAYS_MS.length - 1)];
      return new Promise((resolve) => setTimeout(resolve, pause)).then(() =>
        this.execute(handle, query, { since, tries: tries + 1 }),
      );
    }
  }

  /**
   * Ownership follows SQLite's own view, so a failed commit keeps the transaction its owner's. A statement
   * that ends a write — a commit, or a write outside a transaction — answers once the WAL is on disk, and
   * holds every other statement back until then.
   */
  #run(handle: Handle, query: CompiledQuery): Promise<QueryResult<unknown>> {
    let result: QueryResult<unknown>;
    const statement = this.#prepare(query.sql);
    // COMMIT itself counts as read-only (SQLite's view): what it ends is known by the writes before it.
    // BEGIN IMMEDIATE does not (it takes the write lock) but writes nothing: a transaction that only
    // read has nothing to flush.
    if (!statement.readonly && query.sql !== BEGIN) this.#unflushed = true;
    try {
      const parameters = query.parameters as unknown[];
      if (statement.reader) {
        result = { rows: statement.all(parameters) };
      } else {
        const { changes, lastInsertRowid } = statement.run(parameters);
        result = { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
      }
    } finally {
      this.#owner = this.#connection.inTransaction ? handle : undefined;
    }
    // It ran, so any lock it needed was free.
    if (!statement.readonly) this.#lockSeen = undefined;
    if (this.#wal && this.#unflushed && this.#owner === undefined) {
      this.#unflushed = false;
      this.#owner = this.#flushing;
      return this.#wal
        .flush()
        .finally(() => {
          this.#owner = undefined;
          this.#drain();
        })
        .then(() => result);
    }
    return Promise.resolve(result);
  }

  /**
   * Kysely prepares every query anew, and preparing costs more than running a small query. Statements are
   * reusable in better-sqlite3, so keep the recent ones, least recently used out first.
   */
  #prepare(text: string): SQLite.Statement {
    let statement = this.#statements.get(text);
    if (statement) {
      this.#statements.delete(text);
    } else {
      statement = this.#connection.prepare(text);
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value as string);
      }
    }
    this.#statements.set(text, statement);
    return statement;
  }
}

/**
 * The lock another connection holds; SQLite gives the other kinds of SQLITE_BUSY (a snapshot that went
 * stale in a transaction, say) at once, as no wait can end them.
 */
function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_BUSY_RECOVERY';
}

/**
 * Kysely's SQLite adapter takes no lock for migrations and runs them outside a transaction, so two
 * processes starting on a new file both ran the first one, and one failed (`table "merchants" already
 * exists`). In one transaction, begun IMMEDIATE, the second waits for the first's whole run, then finds
 * nothing left to do; a migration that fails leaves nothing of itself behind.
 */
class MigratingSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export interface SqliteAccess {
  dialect: Dialect;
  /** Runs SQL outside any transaction: at once, or after the transaction open at the moment. */
  run<R>(sql: string, parameters: readonly unknown[]): Promise<R[]>;
  /** Stops the checkpoint worker and closes the connection and the WAL's descriptor; idempotent. */
  close(): Promise<void>;
}

function sqliteAccess(
  connection: SQLite.Database,
  wal: WalFlush | undefined,
  checkpointer: Checkpointer | undefined,
  busyTimeoutMs: number,
): SqliteAccess {
  const driver = new SqliteDriver(connection, wal, checkpointer, busyTimeoutMs);
  // Never opens a transaction: it only runs the statements given to `run`.
  const outside = new Handle(driver);
  const dialect: Dialect = {
    createDriver: () => driver,
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new MigratingSqliteAdapter(),
    createIntrospector: (db: Kysely<unknown>): DatabaseIntrospector => new SqliteIntrospector(db),
  };
  return {
    dialect,
    run: async <R>(sql: string, parameters: readonly unknown[]) =>
      (await driver.execute(outside, CompiledQuery.raw(sql, [...parameters]))).rows as R[],
    close: () => driver.destroy(),
  };
}
