/** The service in a process of its own, run from the sources as `wallet-checkout serve --json`. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

/**
 * Starts `serve` on a free port with `env` over this process's environment (warnings only in its log,
 * which goes to the test's stderr); resolves once it listens, rejects if it ends first.
 */
export async function startServiceProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--json'], {
    env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"url":\s*"(http:\/\/[^"]+)"/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}: ${out}`)));
  });
  return { child, url };
}
