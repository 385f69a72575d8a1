/** Runs `wallet-checkout` commands in-process, as the CLI tests do, and reads what they printed. */
import path from 'node:path';
import { expect } from 'vitest';
import { type CliIo, run } from '../cli/run.js';
import type { Engine } from '../db/index.js';
import type { TestDatabase } from './db.js';

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a command needs to reach a test database: its URL (on SQLite a file in its folder) and that folder. */
export function cliEnv(engine: Engine, database: TestDatabase): { DATABASE_URL: string; DATA_DIR: string } {
  return {
    DATABASE_URL: engine === 'sqlite' ? `sqlite:${path.join(database.dataDir, 'w.db')}` : database.url,
    DATA_DIR: database.dataDir,
  };
}

export async function runCli(
  env: CliIo['env'],
  argv: string[],
  extra: Partial<CliIo> = {},
): Promise<Outcome> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await run(argv, {
    stdout: (text) => stdout.push(text),
    stderr: (text) => stderr.push(text),
    env,
    ...extra,
  });
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}

/**
 * The line a command that opened the database at `databaseUrl` writes first on stderr, written out here
 * rather than by the code under test: the SQLite file's absolute path, or PostgreSQL's host, database and
 * user (never the password).
 */
export function databaseLine(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    return `database: the SQLite file ${path.resolve(databaseUrl.slice('sqlite:'.length))}\n`;
  }
  const url = new URL(databaseUrl);
  return `database: PostgreSQL at ${url.host} (database ${url.pathname.slice(1)}, user ${url.username})\n`;
}

/** A time as `--json` output gives it: ISO 8601 in UTC, to the millisecond. */
export const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Checks every field named like a time (`…At`, `…Until`, `at`) in a `--json` output, however deep: an
 * ISO 8601 string or null, never a number. Audit events' `details` are as stored, and are not looked into.
 */
export function expectIsoTimes(value: unknown, where = '$'): void {
  if (Array.isArray(value)) {
    for (const [index, inner] of value.entries()) expectIsoTimes(inner, `${where}[${index}]`);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'details') continue;
    if (/(At|Until)$|^at$/.test(key) && inner !== null) expect(inner, `${where}.${key}`).toMatch(ISO_TIME);
    else expectIsoTimes(inner, `${where}.${key}`);
  }
}

/**
 * stderr without the line naming the database and the one-time lines of a fresh folder: a generated
 * staging key ring, a new database.
 */
function errors(outcome: Outcome): string {
  return outcome.stderr
    .split('\n')
    .filter(
      (line) =>
        line !== '' &&
        !line.startsWith('database: ') &&
        !line.startsWith('warning: VAULT_KEYS is not set') &&
        !line.startsWith('note: created a new database at'),
    )
    .join('\n');
}

/** The one JSON line a successful `--json` command printed. */
export function json(outcome: Outcome): unknown {
  expect(errors(outcome)).toBe('');
  expect(outcome.code).toBe(0);
  expect(outcome.stdout.endsWith('\n')).toBe(true);
  expect(outcome.stdout.trimEnd().split('\n')).toHaveLength(1);
  return JSON.parse(outcome.stdout);
}
