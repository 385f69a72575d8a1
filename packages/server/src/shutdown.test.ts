import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestDatabase, testDatabase } from './test-support/db.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs `serve` from the sources, sends `signal` once it listens, and tells how the process ended. */
async function serveUntil(
  signal: NodeJS.Signals,
  args: string[],
  env: Record<string, string>,
): Promise<Ended> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', ...args], {
    env: {
      ...process.env,
      ...env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      // A delivery worker still starting keeps the process alive for a second or so after the signal, and
      // so would hide a stop that waits for something nothing else keeps alive (which ends with code 13).
      WEBHOOK_WORKER: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const ended = new Promise<Ended>((resolve) =>
    child.once('exit', (code, endSignal) => resolve({ code, signal: endSignal, stderr })),
  );
  // 20 s: starting and stopping take about two; a process that hangs is killed, and ends by SIGKILL.
  const hung = setTimeout(() => child.kill('SIGKILL'), 20_000);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      // Printed, as text or JSON, once the service listens.
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /(?:listening on |"url": ")(http:\/\/[\d.:]+)/.exec(stdout);
        if (match?.[1]) resolve(match[1]);
      });
      void ended.then(() => reject(new Error(`the service ended before it listened: ${stderr}`)));
    });
    // The service answers: it is up, and its signal handlers were set before the URL was printed.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // 500 ms for the work that follows the start (staging data, the first outbox poll) to end: I/O still
    // in flight during the stop keeps the process alive, which too would hide the stop described above.
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill(signal);
    return await ended;
  } finally {
    clearTimeout(hung);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/**
 * A clean stop ends with code 0: the service closes its sockets and its database, and the process then
 * exits, neither hanging nor ending with Node's 13 (a top-level await that nothing could settle).
 */
describe.each(engines())('serve stopped by a signal on %s', (engine) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await testDatabase(engine);
  });
  afterAll(async () => {
    await database.drop();
  });

  it.each([
    ['SIGTERM', ['--json']],
    ['SIGINT', []],
    ['SIGHUP', []],
  ] as const)('exits 0 after %s (arguments %j)', { timeout: 30_000 }, async (signal, args) => {
    const ended = await serveUntil(signal, [...args], {
      DATABASE_URL: database.url,
      DATA_DIR: database.dataDir,
    });
    expect({ code: ended.code, signal: ended.signal }).toEqual({ code: 0, signal: null });
    expect(ended.stderr).toContain(`${signal}: stopping`);
    expect(ended.stderr).not.toMatch(/error/i);
    if (engine === 'sqlite') {
      // SQLite removes the WAL when the last connection closes: the checkpoint worker's, then the main one.
      expect(fs.existsSync(`${database.url.slice('sqlite:'.length)}-wal`)).toBe(false);
    }
  });
});
