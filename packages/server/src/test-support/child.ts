import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/** How a process ended, and all it printed. */
export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

// By its path: `--import tsx` is looked for from the child's folder, which may have no node_modules.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * Runs `node <args>` with tsx loaded (TypeScript files run as they are) until it ends, as `user` when
 * given (run as root: `runuser`). One still running after `timeoutMs` is killed, so that a hang fails
 * its test rather than blocking the suite.
 */
export function runNode(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; user?: string } = {},
): Promise<Finished> {
  const node = [process.execPath, '--import', TSX, ...args];
  const [command, ...rest] =
    options.user === undefined ? node : ['runuser', '-u', options.user, '--', ...node];
  const child = spawn(command as string, rest, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const hung = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(hung);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(hung);
      resolve({ code, stdout, stderr });
    });
  });
}
