import path from 'node:path';
import { type Compilable, CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { openSqlite, type SqliteOptions } from './sqlite.js';

export type { Database } from './schema.js';
export type Engine = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  engine: Engine;
  /** Runs compiled SQL outside any transaction; see `prepared`. */
  run<R>(sql: string, parameters: readonly unknown[]): Promise<R[]>;
  /** The PostgreSQL pool, for LISTEN/NOTIFY; undefined on SQLite. */
  pool: pg.Pool | undefined;
  /** Which database, for messages: never its password. */
  where: string;
  close(): Promise<void>;
}

// int8 columns hold epoch milliseconds and counts, all far below 2^53: read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function engineOf(databaseUrl: string): Engine {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

export interface DbOptions extends SqliteOptions {
  poolSize?: number;
  /** Errors of idle PostgreSQL connections (server restart, network); the pool replaces them. */
  onIdleError?: (error: Error) => void;
}

/**
 * How long a request waits for a PostgreSQL connection: to open one, or for one of the pool's to come free.
 * Without it, a server that stopped answering (a host down, a packet filter dropping) holds every request
 * until the operating system gives up on the connection, minutes later, instead of a 503 in seconds.
 */
export const PG_CONNECT_TIMEOUT_MS = 5_000;

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  if (engineOf(databaseUrl) === 'sqlite') {
    const file = databaseUrl.slice('sqlite:'.length);
    const access = openSqlite(file, options);
    const kysely = new Kysely<Database>({ dialect: access.dialect });
    return {
      kysely,
      engine: 'sqlite',
      run: access.run,
      pool: undefined,
      where: file === ':memory:' ? 'the in-memory SQLite database' : `the SQLite file ${path.resolve(file)}`,
      close: async () => {
        await kysely.destroy();
        // Kysely destroys its driver only if it has run a query; `run` goes to the driver directly.
        await access.close();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
  });
  // Without a listener, an idle connection's error (a restarted server, a dropped link) kills the process.
  pool.on('error', (error) => options.onIdleError?.(error));
  /** Connections whose socket has not closed yet. */
  const open = new Set<pg.Client>();
  pool.on('connect', (poolClient) => {
    // pg-pool's clients are pg.Client, whose connection (and its socket) PoolClient's type leaves out.
    const client = poolClient as pg.PoolClient & pg.Client;
    open.add(client);
    client.once('end', () => open.delete(client));
    // A connection lost while lent out (the server shut down or ended it mid-query) emits 'error' where
    // the pool listens only to idle ones: unheard, it would end the process. The query under way fails
    // with it, and the pool drops the connection once it is given back.
    client.on('error', () => undefined);
  });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    engine: 'postgres',
    run: async <R>(text: string, parameters: readonly unknown[]) =>
      (await kysely.executeQuery<R>(CompiledQuery.raw(text, [...parameters]))).rows,
    pool,
    where: postgresWhere(databaseUrl),
    close: async () => {
      await kysely.destroy();
      // pg-pool's end() resolves once it has asked every connection to end, not once their sockets have
      // closed (after the server's answer to Terminate): they would keep the process alive after the stop
      // said it had ended, for as long as a busy server takes.
      await socketsClosed([...open]);
    },
  };
}

/**
 * 2 s: a server ends a session as soon as it reads Terminate; the socket of one that does not answer (gone,
 * or cut off by the network) is not waited for longer.
 */
const PG_END_TIMEOUT_MS = 2_000;

/** Waits for the clients' sockets to close, PG_END_TIMEOUT_MS at most, then destroys those still open. */
async function socketsClosed(clients: pg.Client[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, PG_END_TIMEOUT_MS);
  });
  // Not events.once: it rejects on 'error', which a socket reset while it closes may emit first.
  const ended = clients.map((client) => new Promise((resolve) => client.once('end', resolve)));
  await Promise.race([Promise.all(ended), late]);
  clearTimeout(timer);
  for (const client of clients) client.connection.stream.destroy();
}

/** `PostgreSQL at db.example.com:5432 (database wallet, user wallet)`: the URL without its password. */
function postgresWhere(databaseUrl: string): string {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return 'the PostgreSQL database of DATABASE_URL';
  }
  const database = decodeURIComponent(url.pathname.slice(1)) || '(the user name)';
  const user = decodeURIComponent(url.username) || '(the system user)';
  return `PostgreSQL at ${url.host || 'the local socket'} (database ${database}, user ${user})`;
}

/**
 * A query Kysely compiles once, for the hot point reads: its builders allocate and compile on every
 * call, which costs more than reading a row by its key (about 2.5 of 6.5 µs). `build` is called once
 * with `placeholders`, each of which the query must use exactly once and in order; every call then runs
 * the same SQL with its own arguments in their place, outside any transaction. Never await one inside a
 * transaction's callback: on SQLite it waits for that transaction to end.
 */
export function prepared<A extends unknown[], R>(
  db: Db,
  build: (...args: A) => Compilable<R>,
  placeholders: A,
): (...args: A) => Promise<R[]> {
  let text: string | undefined;
  return (...args) => {
    if (text === undefined) {
      const compiled = build(...placeholders).compile();
      const { parameters } = compiled;
      if (parameters.length !== placeholders.length || parameters.some((p, i) => p !== placeholders[i])) {
        throw new Error(`prepared query does not use its placeholders once each, in order: ${compiled.sql}`);
      }
      text = compiled.sql;
    }
    return db.run<R>(text, args);
  };
}

/** The largest chunk `chunks` makes: 256 rows of 8 columns stay far below both engines' parameter limits. */
const LARGEST_CHUNK = 256;

/**
 * Splits rows for multi-row statements into chunks of 256, 128, 64 … 1 rows. Each row count is a
 * different statement, which SQLite prepares anew when it is not among the cached ones (about 3 µs per
 * row, more than running it): in these nine sizes every statement is prepared once and then reused.
 */
export function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  let start = 0;
  for (let size = LARGEST_CHUNK; size >= 1; size /= 2) {
    while (rows.length - start >= size) {
      out.push(rows.slice(start, start + size));
      start += size;
    }
  }
  return out;
}

/**
 * SQL text compiled once per dialect adapter (one per Kysely instance, shared by its transactions) and
 * per row count. `build` receives rows of markers (one per value, `width` a row) and must use each marker
 * once, in order.
 */
function compiledOnce(
  width: number,
  build: (executor: Kysely<Database>, rows: number[][]) => CompiledQuery,
): (executor: Kysely<Database>, count: number) => string {
  const texts = new WeakMap<object, Map<number, string>>();
  return (executor, count) => {
    const { adapter } = executor.getExecutor();
    let byCount = texts.get(adapter);
    if (byCount === undefined) {
      byCount = new Map();
      texts.set(adapter, byCount);
    }
    let known = byCount.get(count);
    if (known === undefined) {
      const markers = Array.from({ length: count }, (_, row) =>
        Array.from({ length: width }, (_, column) => row * width + column),
      );
      const compiled = build(executor, markers);
      if (compiled.parameters.length !== count * width || compiled.parameters.some((p, i) => p !== i)) {
        throw new Error(`statement does not use its markers once each, in order: ${compiled.sql}`);
      }
      known = compiled.sql;
      byCount.set(count, known);
    }
    return known;
  };
}

/**
 * A batch statement Kysely compiles once per row count, for the hot batch writes: building one row by
 * row costs Kysely more than SQLite takes to run it. `build` receives rows of markers (see
 * `compiledOnce`); `values` gives a row's values in the same order. Rows are written in chunks (see
 * `chunks`) inside the executor given to the returned function.
 */
export function batchStatement<R>(
  width: number,
  values: (row: R) => readonly unknown[],
  build: (executor: Kysely<Database>, rows: number[][]) => CompiledQuery,
): (executor: Kysely<Database>, rows: readonly R[]) => Promise<void> {
  const text = compiledOnce(width, build);
  return async (executor, rows) => {
    for (const chunk of chunks(rows)) {
      const parameters: unknown[] = [];
      for (const row of chunk) parameters.push(...values(row));
      await executor.executeQuery(CompiledQuery.raw(text(executor, chunk.length), parameters));
    }
  };
}

/**
 * A one-row statement Kysely compiles once, run once per row inside the executor given: where SQLite
 * plans a multi-row form badly (an UPDATE … FROM (VALUES …) takes 7 to 17 µs a row, a plain keyed
 * UPDATE 3.5). `build` receives the row's markers (see `compiledOnce`).
 */
export function rowStatement<R>(
  width: number,
  values: (row: R) => readonly unknown[],
  build: (executor: Kysely<Database>, row: number[]) => CompiledQuery,
): (executor: Kysely<Database>, rows: readonly R[]) => Promise<void> {
  const text = compiledOnce(width, (executor, [markers]) => build(executor, markers as number[]));
  return async (executor, rows) => {
    for (const row of rows) {
      await executor.executeQuery(CompiledQuery.raw(text(executor, 1), [...values(row)]));
    }
  };
}

/**
 * A multi-row INSERT compiled once per row count (see `batchStatement`). `columns` names every column of
 * the table, so that the type checker reports one a change forgets.
 */
export function batchInsert<T extends keyof Database & string>(
  table: T,
  columns: Record<keyof Database[T] & string, true>,
): (executor: Kysely<Database>, rows: readonly Database[T][]) => Promise<void> {
  const names = Object.keys(columns);
  return batchStatement<Database[T]>(
    names.length,
    (row) => names.map((name) => (row as unknown as Record<string, unknown>)[name]),
    (executor, rows) =>
      executor
        .insertInto(table)
        .values(rows.map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]]))) as never)
        .compile(),
  );
}

/** True when a trivial query succeeds; used by `GET /healthz`. */
export async function ping(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db.kysely);
    return true;
  } catch {
    return false;
  }
}
