/** `backup`: a consistent copy of the embedded database, taken while the service runs. */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { ConfigError } from '../config.js';
import { createPrivateFile } from '../files.js';
import { STAGING_KEYS_FILE } from '../vault/keyring.js';
import { type Command, defineCommand, requiredOption, UsageError } from './args.js';

const backup = defineCommand<{ file: string }>({
  name: 'backup',
  summary: 'Copy the embedded (SQLite) database to a new file, consistently, while the service runs.',
  options: {
    to: { type: 'string', value: 'FILE', description: 'the new file (it must not exist yet)' },
  },
  details: [
    'The copy is one snapshot: every acknowledged request in it is whole. Card data and secrets in it stay',
    'encrypted, so keep the vault keys (VAULT_KEYS, or the vault-keys file in the data folder) too, elsewhere.',
    'To restore: stop the service, put the copy where DATABASE_URL points (removing any -wal and -shm files',
    'beside it), and start it. The copy is readable by its owner only (mode 0600); a backup that fails leaves',
    'no file. On PostgreSQL use pg_dump instead. With --json: {"file", "bytes", "seconds"}.',
  ],
  prepare({ values }) {
    const file = path.resolve(requiredOption(values, 'to', 'backup'));
    if (fs.existsSync(file)) throw new UsageError(`--to: ${file} exists; choose a new file`, 'backup');
    const folder = path.dirname(file);
    if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
      throw new UsageError(`--to: the folder ${folder} does not exist`, 'backup');
    }
    return { file };
  },
  async execute(context, { file }) {
    const { config, db } = context;
    if (db.engine !== 'sqlite') {
      throw new ConfigError(
        'DATABASE_URL',
        'is a PostgreSQL database: back it up with pg_dump (pg_dump "$DATABASE_URL" > wallet.sql), and keep VAULT_KEYS apart from it',
      );
    }
    const started = performance.now();
    // The copy holds the whole database, so only its owner may read it, whatever the umask: VACUUM INTO
    // writes into an empty file it is given, so the file is made 0600 first and is never readable by others.
    createPrivateFile(file);
    let bytes: number;
    let seconds: number;
    // A backup that fails at any step leaves no file: neither a copy that failed its check nor one the audit
    // trail does not know of (it holds every shopper's data), and the next try may name the same --to.
    try {
      // VACUUM INTO writes the database as one read transaction sees it: a snapshot, whatever the service
      // commits meanwhile, and compact (free pages are left out).
      await sql`vacuum into ${file}`.execute(db.kysely);
      seconds = (performance.now() - started) / 1000;
      const copy = new Database(file, { readonly: true, fileMustExist: true });
      const check = copy.pragma('quick_check', { simple: true });
      copy.close();
      if (check !== 'ok') throw new Error(`the copy in ${file} failed its check: ${String(check)}`);
      bytes = fs.statSync(file).size;
      await context.audit.record({
        actor: context.actor,
        action: 'database.backed_up',
        details: { file, bytes },
      });
    } catch (error) {
      fs.rmSync(file, { force: true });
      throw error;
    }
    const keys = config.vaultKeys
      ? 'VAULT_KEYS'
      : `the key file ${path.join(config.dataDir, STAGING_KEYS_FILE)}`;
    context.print(
      [
        `Copied the database to ${file} (${(bytes / 1024 / 1024).toFixed(1)} MiB, ${seconds.toFixed(2)} s); its check passed.`,
        `Card data and secrets in it are encrypted: keep ${keys} too, apart from it.`,
      ].join('\n'),
      { file, bytes, seconds },
    );
    return 0;
  },
});

export const BACKUP_COMMANDS: Command[] = [backup];
