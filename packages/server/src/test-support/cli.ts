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

/** stderr without the one-time lines of a fresh folder: a generated staging key ring, a new database. */
function errors(outcome: Outcome): string {
  return outcome.stderr
    .split('\n')
    .filter(
      (line) =>
        line !== '' &&
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
