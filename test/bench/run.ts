/**
 * `npm run bench` (after the build): the server's phases (packages/server/src/bench/run.ts, as built),
 * then the browser's (./browser.ts, run by Vitest with ./vitest.config.ts because the browser harness is
 * built on it). `npm run bench -- --only server` or `-- --only browser` runs one part. Each part prints its
 * figures with the command that produced them.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startVitest } from 'vitest/node';

const PARTS = ['server', 'browser'];
const SERVER_BENCH = fileURLToPath(new URL('../../packages/server/dist/bench/run.js', import.meta.url));
const BROWSER_CONFIG = fileURLToPath(new URL('./vitest.config.ts', import.meta.url));

function chosenPart(): string | undefined {
  let only: string | undefined;
  try {
    only = parseArgs({ options: { only: { type: 'string' } } }).values.only;
  } catch (error) {
    return usage((error as Error).message);
  }
  if (only !== undefined && !PARTS.includes(only)) usage(`--only must be one of ${PARTS.join(', ')}`);
  return only;
}

function usage(problem: string): never {
  process.stderr.write(`${problem}\nusage: npm run bench [-- --only ${PARTS.join('|')}]\n`);
  process.exit(2);
}

async function server(): Promise<boolean> {
  const child = spawn(process.execPath, [SERVER_BENCH], { stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return code === 0;
}

async function browser(command: string): Promise<boolean> {
  process.env.BENCH_COMMAND = command;
  await startVitest('test', [], { config: BROWSER_CONFIG, run: true });
  return !process.exitCode;
}

const only = chosenPart();
let ok = true;
if (only !== 'browser') ok = await server();
if (ok && only !== 'server') ok = await browser(only ? `npm run bench -- --only ${only}` : 'npm run bench');
if (!ok) process.exitCode = 1;
