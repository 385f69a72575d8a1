import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { freePort } from '../cli/service-commands.js';
import { runNode } from '../test-support/child.js';
import { runCli } from '../test-support/cli.js';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

let folder: string;
beforeEach(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-access-'));
});
afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

/** `migrate --json` on DATABASE_URL `url`, keys in the test's folder: its error, parsed. */
async function migrateError(
  url: string,
  env: Record<string, string> = {},
): Promise<{ code: string; message: string }> {
  const outcome = await runCli({ DATABASE_URL: url, DATA_DIR: folder, ...env }, ['migrate', '--json']);
  expect([outcome.code, outcome.stdout]).toEqual([1, '']);
  const last = outcome.stderr.trimEnd().split('\n').at(-1) as string;
  return (JSON.parse(last) as { error: { code: string; message: string } }).error;
}

const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

describe('the embedded database on disk', () => {
  it('is made readable by its owner only: the folders it makes 0700, the database, WAL and shared memory 0600', async () => {
    const file = path.join(folder, 'new', 'deeper', 'wallet.db');
    const outcome = await runCli({ DATABASE_URL: `sqlite:${file}`, DATA_DIR: folder }, ['migrate']);
    expect(outcome.code).toBe(0);
    expect([mode(path.join(folder, 'new')), mode(path.dirname(file))]).toEqual(['700', '700']);
    // The command has ended and SQLite took its WAL away: open it again and keep it open.
    const Database = (await import('better-sqlite3')).default;
    const connection = new Database(file);
    try {
      connection.pragma('journal_mode = WAL');
      connection.exec('create table probe (id integer)');
      expect([file, `${file}-wal`, `${file}-shm`].map(mode)).toEqual(['600', '600', '600']);
    } finally {
      connection.close();
    }
  });

  it('that this user may only read is named at start, not at its first write', async () => {
    const file = path.join(folder, 'wallet.db');
    const env = { DATABASE_URL: `sqlite:${file}`, VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}` };
    expect((await runCli(env, ['migrate'])).code).toBe(0);
    // Already in WAL mode, so opening it writes nothing. Root may write any file: it asks another user.
    let error: { code: string; message: string };
    if (process.getuid?.() === 0) {
      fs.chmodSync(folder, 0o777);
      fs.chmodSync(file, 0o644);
      const finished = await runNode([MAIN, 'migrate', '--json'], {
        env: { ...process.env, ...env },
        user: 'nobody',
      });
      expect([finished.code, finished.stdout]).toEqual([1, '']);
      ({ error } = JSON.parse(finished.stderr.trim().split('\n').at(-1) as string));
    } else {
      fs.chmodSync(file, 0o444);
      error = await migrateError(env.DATABASE_URL, env);
    }
    expect(error).toEqual({
      code: 'DATABASE_UNAVAILABLE',
      message: `DATABASE_URL: cannot use the SQLite file ${file}: permission denied, access '${file}'`,
    });
  });

  it('that cannot be made is named with the reason, at once, even under /proc', async () => {
    const error = await migrateError('sqlite:/proc/no-such-folder/wallet.db');
    expect(error).toEqual({
      code: 'DATABASE_UNAVAILABLE',
      message:
        "DATABASE_URL: cannot use the SQLite file /proc/no-such-folder/wallet.db: no such file or directory, mkdir '/proc/no-such-folder'",
    });
    expect(fs.readdirSync(folder)).toEqual([]);
  });
});

describe('a PostgreSQL database that cannot be used', () => {
  it('that nothing answers for is named, without its password, with the reason', async () => {
    const port = await freePort('127.0.0.1');
    const error = await migrateError(`postgres://wallet:hunter2-secret@127.0.0.1:${port}/shop`);
    expect(error).toEqual({
      code: 'DATABASE_UNAVAILABLE',
      message: `DATABASE_URL: cannot use PostgreSQL at 127.0.0.1:${port} (database shop, user wallet): connect ECONNREFUSED 127.0.0.1:${port}`,
    });
  });

  const postgresUrl = inject('postgresUrl');

  it.runIf(postgresUrl)(
    'that does not exist on a server that answers is named, with the reason',
    async () => {
      const url = new URL(postgresUrl as string);
      url.pathname = '/wallet_no_such_database';
      const error = await migrateError(url.toString());
      expect(error.code).toBe('DATABASE_UNAVAILABLE');
      expect(error.message).toBe(
        `DATABASE_URL: cannot use PostgreSQL at ${url.host} (database wallet_no_such_database, user ${url.username}): database "wallet_no_such_database" does not exist`,
      );
    },
  );

  it.runIf(postgresUrl)('that is asked for TLS it does not offer is named, with the reason', async () => {
    const url = new URL(postgresUrl as string);
    url.searchParams.set('sslmode', 'verify-full');
    const error = await migrateError(url.toString());
    expect(error).toEqual({
      code: 'DATABASE_UNAVAILABLE',
      message: `DATABASE_URL: cannot use PostgreSQL at ${url.host} (database ${url.pathname.slice(1)}, user ${url.username}): The server does not support SSL connections`,
    });
  });
});
