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

/** Prepared statements kept; multi-row inserts of different sizes are distinct statements. */
const STATEMENT_CACHE_SIZE = 500;

export function openSqlite(file: string): SQLite.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  // FULL: the WAL is fsynced on every commit, so an acknowledgement sent after a commit survives a crash
  // of the process or of the machine. NORMAL would only survive a crash of the process.
  connection.pragma('synchronous = FULL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('foreign_keys = ON');
  // 64 MiB of page cache instead of SQLite's 2 MiB: the webhook deliveries' point reads then find their
  // pages in memory rather than asking the kernel for them.
  connection.pragma('cache_size = -65536');
  return connection;
}

interface Waiting {
  handle: Handle;
  query: CompiledQuery;
  resolve(result: QueryResult<unknown>): void;
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
  readonly #statements = new Map<string, SQLite.Statement>();
  /** The handle whose transaction is open; undefined between transactions. */
  #owner: Handle | undefined;
  /** Statements of other handles that arrived while a transaction was open, in arrival order. */
  readonly #waiting: Waiting[] = [];

  constructor(connection: SQLite.Database) {
    this.#connection = connection;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Handle(this);
  }

  async releaseConnection(): Promise<void> {}

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    this.#connection.close();
  }

  /** Runs the statement now, or, while another handle's transaction is open, once it has ended. */
  execute(handle: Handle, query: CompiledQuery): Promise<QueryResult<unknown>> {
    if (this.#owner !== undefined && this.#owner !== handle) {
      return new Promise((resolve, reject) => this.#waiting.push({ handle, query, resolve, reject }));
    }
    try {
      return Promise.resolve(this.#run(handle, query));
    } catch (error) {
      return Promise.reject(error);
    } finally {
      if (this.#owner === undefined) this.#drain();
    }
  }

  /** Runs waiting statements in order until one of them opens a transaction. */
  #drain(): void {
    while (this.#owner === undefined && this.#waiting.length > 0) {
      const next = this.#waiting.shift() as Waiting;
      try {
        next.resolve(this.#run(next.handle, next.query));
      } catch (error) {
        next.reject(error);
      }
    }
  }

  /** Ownership follows SQLite's own view, so a failed commit keeps the transaction its owner's. */
  #run(handle: Handle, query: CompiledQuery): QueryResult<unknown> {
    try {
      const statement = this.#prepare(query.sql);
      const parameters = query.parameters as unknown[];
      if (statement.reader) return { rows: statement.all(parameters) };
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
    } finally {
      this.#owner = this.#connection.inTransaction ? handle : undefined;
    }
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

export interface SqliteAccess {
  dialect: Dialect;
  /** Runs SQL outside any transaction: at once, or after the transaction open at the moment. */
  run<R>(sql: string, parameters: readonly unknown[]): Promise<R[]>;
}

export function sqliteAccess(connection: SQLite.Database): SqliteAccess {
  const driver = new SqliteDriver(connection);
  // Never opens a transaction: it only runs the statements given to `run`.
  const outside = new Handle(driver);
  const dialect: Dialect = {
    createDriver: () => driver,
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createAdapter: () => new SqliteAdapter(),
    createIntrospector: (db: Kysely<unknown>): DatabaseIntrospector => new SqliteIntrospector(db),
  };
  return {
    dialect,
    run: async <R>(sql: string, parameters: readonly unknown[]) =>
      (await driver.execute(outside, CompiledQuery.raw(sql, [...parameters]))).rows as R[],
  };
}
