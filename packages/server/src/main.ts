/** Entry point of the `wallet-checkout` command (bin/wallet-checkout.js imports the built file). */
import { run } from './cli/run.js';

const code = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
process.exitCode = code;
// 10 s: if a stray handle (a socket, a timer) keeps the loop alive after the command finished or the
// service stopped, exit anyway. Unref'd, so a clean run exits at once and flushes its output first.
setTimeout(() => process.exit(code), 10_000).unref();
