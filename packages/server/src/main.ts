/** Entry point of the `wallet-checkout` command (bin/wallet-checkout.js imports the built file). */
import { toJson } from './cli/output.js';
import { run } from './cli/run.js';

let finished = false;
// The event loop emptied while the command still waited: something it awaited (a worker's exit, a
// socket's close) had nothing keeping it alive and can never happen. Node would end the process with
// code 13 (unsettled top-level await) and no word; say so, and fail as any other failed command does.
process.once('beforeExit', () => {
  if (finished) return;
  const message = 'stopped before the command finished: it waited for something that never came';
  const json = process.argv.includes('--json');
  process.stderr.write(
    json ? `${toJson({ error: { code: 'INTERNAL_ERROR', message } })}\n` : `error: ${message}\n`,
  );
  process.exitCode = 1;
});

const code = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
finished = true;
process.exitCode = code;
// 10 s: if a stray handle (a socket, a timer) keeps the loop alive after the command finished or the
// service stopped, exit anyway. Unref'd, so a clean run exits at once and flushes its output first.
setTimeout(() => process.exit(code), 10_000).unref();
