/**
 * What every command gets: configuration from the environment, the key ring and the database (migrated
 * first). Opened per command and closed when it ends.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Actor, AuditTrail, operatorActor } from '../audit/index.js';
import { type Config, loadConfig } from '../config.js';
import { createDb, type Db } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { Merchants } from '../merchants/index.js';
import { type KeyRing, loadKeyRing } from '../vault/keyring.js';
import { toJson } from './output.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Resolves when the long-running commands (`serve`, `start`) should stop; SIGINT, SIGTERM or SIGHUP by default. */
  waitForStop?: () => Promise<string>;
}

/** What a command that opens nothing gets: its input and output. */
export interface Output {
  io: CliIo;
  /** Writes `json` as one line with --json, else the text. */
  print(text: string, json: unknown): void;
}

/** The output of a command line: `--json` or not. */
export function outputOf(io: CliIo, json: boolean): Output {
  return { io, print: (text, value) => io.stdout(`${json ? toJson(value) : text}\n`) };
}

export interface Context extends Output {
  config: Config;
  db: Db;
  keyRing: KeyRing;
  merchants: Merchants;
  /** Whom the audit trail names for this command's actions: the person at the command line. */
  actor: Actor;
  /** For actions that record their event on their own (reads, and work of many transactions). */
  audit: AuditTrail;
  /** Migrations applied by this run (usually none). */
  migrated: string[];
  /** Closes the database; a second call does nothing. */
  close(): Promise<void>;
}

/** A command that works on the service's data was pointed at an embedded database that does not exist. */
export class MissingDatabaseError extends Error {
  constructor(file: string, databaseUrl: string, isDefault: boolean) {
    const where = isDefault ? `${databaseUrl}, the default` : databaseUrl;
    const remedy = path.isAbsolute(databaseUrl.slice('sqlite:'.length))
      ? 'check DATABASE_URL'
      : 'run the command from the folder the service runs in, or set DATABASE_URL';
    super(
      `no database at ${file} (DATABASE_URL ${where}): ${remedy}; \`wallet-checkout migrate\` creates a new one`,
    );
    this.name = 'MissingDatabaseError';
  }
}

/** The embedded database's file, absolute, when DATABASE_URL names one on disk. */
function sqliteFile(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const file = databaseUrl.slice('sqlite:'.length);
  return file === ':memory:' ? undefined : path.resolve(file);
}

/**
 * `quiet`: the migration's warnings are left to the service the command starts, which logs them.
 * `createsDatabase`: the command may make a new embedded database, and says so on stderr; without it, a
 * missing one stops the command before anything is made (no data folder, key ring or database file), as
 * it is most likely the service's database looked for from the wrong folder.
 */
export async function openContext(
  io: CliIo,
  json: boolean,
  options: { quiet?: boolean; createsDatabase?: boolean } = {},
): Promise<Context> {
  const config = loadConfig(io.env);
  const file = sqliteFile(config.databaseUrl);
  const isNew = file !== undefined && !fs.existsSync(file);
  if (isNew && !options.createsDatabase) {
    throw new MissingDatabaseError(file, config.databaseUrl, !io.env.DATABASE_URL);
  }
  // Before the database: a bad key ring must stop the command before it creates or migrates anything.
  const keyRing = loadKeyRing({
    vaultKeys: config.vaultKeys,
    dataDir: config.dataDir,
    warn: (message) => io.stderr(`warning: ${message}\n`),
  });
  const db = createDb(config.databaseUrl);
  let closed = false;
  try {
    const migrated = await migrate(
      db,
      options.quiet ? undefined : (warning) => io.stderr(`warning: ${warning}\n`),
    );
    if (isNew) io.stderr(`note: created a new database at ${file}\n`);
    // The CLI is short-lived and must see its own writes at once: no caching.
    const merchants = new Merchants({ db, keyRing, env: config.env, cacheTtlMs: 0 });
    return {
      ...outputOf(io, json),
      config,
      db,
      keyRing,
      merchants,
      actor: operatorActor(config.operator, io.env),
      audit: new AuditTrail(db),
      migrated,
      close: async () => {
        if (closed) return;
        closed = true;
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}
