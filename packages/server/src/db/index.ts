import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type { Database } from './schema.js';
export type Engine = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  engine: Engine;
  /** The PostgreSQL pool, for LISTEN/NOTIFY; undefined on SQLite. */
  pool: pg.Pool | undefined;
  close(): Promise<void>;
}

// int8 columns hold epoch milliseconds and counts, all far below 2^53: read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function engineOf(databaseUrl: string): Engine {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

function openSqlite(file: string): SQLite.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const connection = new SQLite(file);
  connection.pragma('journal_mode = WAL');
  // FULL: the WAL is fsynced on every commit, so an acknowledgement sent after a commit survives a crash
  // of the process or of the machine. NORMAL would only survive a crash of the process.
  connection.pragma('synchronous = FULL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('foreign_keys = ON');
  return connection;
}

export interface DbOptions {
  poolSize?: number;
  /** Errors of idle PostgreSQL connections (server restart, network); the pool replaces them. */
  onIdleError?: (error: Error) => void;
}

/** Prepared statements kept per connection; multi-row inserts of different sizes are distinct statements. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew, and preparing costs more than running a small query. Statements are
 * reusable in better-sqlite3, so keep the recent ones, least recently used out first.
 */
function cachingStatements(connection: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => connection.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (statement) {
        statements.delete(text);
      } else {
        statement = connection.prepare(text);
        if (statements.size >= STATEMENT_CACHE_SIZE)
          statements.delete(statements.keys().next().value as string);
      }
      statements.set(text, statement);
      return statement;
    },
  };
}

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  if (engineOf(databaseUrl) === 'sqlite') {
    const connection = openSqlite(databaseUrl.slice('sqlite:'.length));
    const kysely = new Kysely<Database>({
      dialect: new SqliteDialect({ database: cachingStatements(connection) }),
    });
    return {
      kysely,
      engine: 'sqlite',
      pool: undefined,
      close: () => kysely.destroy(),
    };
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  // Without a listener, an idle connection's error (a restarted server, a dropped link) kills the process.
  pool.on('error', (error) => options.onIdleError?.(error));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    engine: 'postgres',
    pool,
    close: () => kysely.destroy(),
  };
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
