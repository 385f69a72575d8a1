/**
 * What every command gets: configuration from the environment, the key ring and the database (migrated
 * first, and named in one line on stderr). Opened per command and closed when it ends.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Actor, AuditTrail, operatorActor } from '../audit/index.js';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { checkAccess } from '../db/access.js';
import { createDb, type Db } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { Merchants } from '../merchants/index.js';
import { type KeyRing, loadKeyRing, STAGING_KEYS_FILE } from '../vault/keyring.js';
import { configuredDestinations } from '../webhooks/url-guard.js';
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
  /**
   * Closes the database; a second call does nothing. With `failed`, a database this command made is
   * taken away again, with its data folder and key ring if it made them too: a refused `merchant create`
   * run from the wrong folder must leave nothing behind for the next command to find.
   */
  close(failed?: boolean): Promise<void>;
}

/** A command that works on the service's data was pointed at an embedded database that does not exist. */
export class MissingDatabaseError extends Error {
  constructor(file: string, databaseUrl: string, isDefault: boolean) {
    const where = isDefault ? `${databaseUrl}, the default` : databaseUrl;
    const remedy = path.isAbsolute(databaseUrl.slice('sqlite:'.length))
      ? 'check DATABASE_URL'
      : 'run the command from the folder the service runs in, or set DATABASE_URL';
    super(
      `no database at ${file} (DATABASE_URL ${where}): ${remedy}; for a new installation, \`wallet-checkout migrate\` makes one there`,
    );
    this.name = 'MissingDatabaseError';
  }
}

/** The embedded database's file, absolute, when DATABASE_URL names one on disk. */
function sqliteFile(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const file = databaseUrl.slice('sqlite:'.length);
  if (file === ':memory:') return undefined;
  const absolute = path.resolve(file);
  if (fs.existsSync(absolute) && fs.statSync(absolute).isDirectory()) {
    throw new ConfigError('DATABASE_URL', `must name a file, got the folder ${absolute}`);
  }
  return absolute;
}

/** What making a new database at `file` may create, of what is not there yet: files first, then folders. */
function notYetThere(file: string, dataDir: string): string[] {
  const files = [
    file,
    `${file}-wal`,
    `${file}-shm`,
    `${file}-journal`,
    path.join(dataDir, STAGING_KEYS_FILE),
  ];
  const folders = new Set<string>();
  for (let folder of [path.dirname(file), path.resolve(dataDir)]) {
    for (; !fs.existsSync(folder); folder = path.dirname(folder)) folders.add(folder);
  }
  // Deepest first, so each is empty by the time it is looked at.
  const deepestFirst = [...folders].sort((a, b) => b.length - a.length);
  return [...files.filter((entry) => !fs.existsSync(entry)), ...deepestFirst];
}

/** Removes what `notYetThere` listed and the command made; a folder only once it is empty. */
function takeAway(made: string[]): void {
  for (const entry of made) {
    if (!fs.existsSync(entry)) continue;
    if (!fs.statSync(entry).isDirectory()) fs.rmSync(entry);
    else if (fs.readdirSync(entry).length === 0) fs.rmdirSync(entry);
  }
}

/**
 * `quiet`: the command starts the service, which logs the migration's warnings itself; only such a
 * command runs on an in-memory database, which no other could share.
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
  if (config.databaseUrl === 'sqlite::memory:' && !options.quiet) {
    throw new ConfigError(
      'DATABASE_URL',
      "sqlite::memory: is a database of one process, gone when it ends: only a service started with it has one; name the service's file or PostgreSQL database",
    );
  }
  const file = sqliteFile(config.databaseUrl);
  const isNew = file !== undefined && !fs.existsSync(file);
  if (isNew && !options.createsDatabase) {
    throw new MissingDatabaseError(file, config.databaseUrl, !io.env.DATABASE_URL);
  }
  const made = isNew ? notYetThere(file, config.dataDir) : [];
  const note = () => io.stderr(`note: created a new database at ${file}\n`);
  let db: Db;
  try {
    db = createDb(config.databaseUrl);
  } catch (error) {
    takeAway(made);
    throw error;
  }
  let closed = false;
  try {
    // A database that cannot be reached stops the command before a staging key ring is generated for it;
    // a bad key ring stops it before the database is migrated.
    await checkAccess(db);
    const keyRing = loadKeyRing({
      vaultKeys: config.vaultKeys,
      dataDir: config.dataDir,
      warn: (message) => io.stderr(`warning: ${message}\n`),
    });
    const migrated = await migrate(
      db,
      options.quiet ? undefined : (warning) => io.stderr(`warning: ${warning}\n`),
    );
    // On stderr, so that stdout (and --json) stays the command's own: a command run where DATABASE_URL is
    // not set works on the default SQLite file, which may not be the service's database. A service names
    // it in what it prints once it listens.
    if (!options.quiet) {
      const defaulted = io.env.DATABASE_URL ? '' : ' (the default: DATABASE_URL is not set)';
      io.stderr(`database: ${db.where}${defaulted}\n`);
    }
    // A service says it at once; any other command once it has done its work, and made it for good.
    if (isNew && options.quiet) note();
    // The CLI is short-lived and must see its own writes at once: no caching.
    const merchants = new Merchants({
      db,
      keyRing,
      env: config.env,
      webhookDestinations: configuredDestinations(config),
      cacheTtlMs: 0,
    });
    return {
      ...outputOf(io, json),
      config,
      db,
      keyRing,
      merchants,
      actor: operatorActor(config.operator, io.env),
      audit: new AuditTrail(db),
      migrated,
      close: async (failed = false) => {
        if (closed) return;
        closed = true;
        await db.close();
        if (failed) takeAway(made);
        else if (isNew && !options.quiet) note();
      },
    };
  } catch (error) {
    await db.close();
    takeAway(made);
    throw error;
  }
}
