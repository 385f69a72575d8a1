/**
 * The `wallet-checkout` command line. `run` takes the arguments and the process's streams and environment
 * as values and returns the exit code, so tests call it in-process. Exit codes: 0 done, 1 failed (bad
 * configuration, refused input, unreachable database…), 2 bad command line. An error is one line on
 * stderr, `error: <message>` (several configuration errors found together, one such line each), or with
 * --json `{"error": {"code": "…", "message": "…"}}`.
 */
import { ConfigError, ConfigErrors } from '../config.js';
import { DatabaseAccessError } from '../db/access.js';
import { DomainError } from '../errors.js';
import { scrub } from '../log.js';
import { type Command, commandHelp, parseCommandLine, UsageError } from './args.js';
import { AUDIT_COMMANDS } from './audit-commands.js';
import { BACKUP_COMMANDS } from './backup-command.js';
import { type CliIo, MissingDatabaseError, openContext, outputOf } from './context.js';
import { GATEWAY_COMMANDS } from './gateway-commands.js';
import { LISTEN_COMMANDS } from './listen-command.js';
import { MERCHANT_COMMANDS } from './merchant-commands.js';
import { ORDER_COMMANDS } from './order-commands.js';
import { toJson } from './output.js';
import { SERVICE_COMMANDS } from './service-commands.js';
import { SHOPPER_COMMANDS } from './shopper-commands.js';
import { SMTP_COMMANDS } from './smtp-command.js';
import { WEBHOOK_COMMANDS } from './webhook-commands.js';

export type { CliIo } from './context.js';

const COMMANDS: Command[] = [
  ...SERVICE_COMMANDS,
  ...MERCHANT_COMMANDS,
  ...GATEWAY_COMMANDS,
  ...ORDER_COMMANDS,
  ...SHOPPER_COMMANDS,
  ...WEBHOOK_COMMANDS,
  ...LISTEN_COMMANDS,
  ...BACKUP_COMMANDS,
  ...AUDIT_COMMANDS,
  ...SMTP_COMMANDS,
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return [
    'Usage: wallet-checkout <command> [options]',
    '',
    'Commands:',
    ...COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Every command takes --json (machine-readable output) and --help.',
    'Configuration comes from the environment (DATABASE_URL, WALLET_ENV, VAULT_KEYS, …).',
    '',
  ].join('\n');
}

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((command) => command.name.startsWith(`${group} `));
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    `Usage: wallet-checkout ${group} <command> [options]`,
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
  ].join('\n');
}

/** The command named by the first one or two words, and the arguments after them. */
function findCommand(argv: string[]): { command: Command; rest: string[] } | { group: string } {
  const [first = '', second = ''] = argv;
  const two = COMMANDS.find((command) => command.name === `${first} ${second}`);
  if (two) return { command: two, rest: argv.slice(2) };
  const one = COMMANDS.find((command) => command.name === first);
  if (one) return { command: one, rest: argv.slice(1) };
  if (COMMANDS.some((command) => command.name.startsWith(`${first} `))) return { group: first };
  throw new UsageError(`unknown command "${first}"`);
}

/** One line whatever the error: a multi-line driver message must not spill over. */
function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

interface Failure {
  exitCode: number;
  /** Stable, for scripts: the domain error code, or the kind of mistake. */
  code: string;
  /** One line each; usually one. */
  messages: string[];
  /** Where a person finds the right usage; not part of the JSON form. */
  hint: string;
}

/**
 * Usage, configuration, missing-database and domain errors are our own messages, written never to carry a
 * secret (they name a key by its id, a credential by its name); anything else is scrubbed of what looks
 * secret.
 */
function failureOf(error: unknown): Failure {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError) {
    const help = error.command ? `wallet-checkout ${error.command} --help` : 'wallet-checkout --help';
    return { exitCode: 2, code: 'USAGE_ERROR', messages: [oneLine(message)], hint: ` (see ${help})` };
  }
  if (error instanceof DatabaseAccessError) {
    return { exitCode: 1, code: 'DATABASE_UNAVAILABLE', messages: [oneLine(message)], hint: '' };
  }
  if (error instanceof ConfigError) {
    return { exitCode: 1, code: 'CONFIGURATION_ERROR', messages: [oneLine(message)], hint: '' };
  }
  if (error instanceof ConfigErrors) {
    const messages = error.errors.map((each) => oneLine(each.message));
    return { exitCode: 1, code: 'CONFIGURATION_ERROR', messages, hint: '' };
  }
  if (error instanceof MissingDatabaseError) {
    return { exitCode: 1, code: 'DATABASE_NOT_FOUND', messages: [oneLine(message)], hint: '' };
  }
  if (error instanceof DomainError) {
    return { exitCode: 1, code: error.errorCode, messages: [oneLine(message)], hint: '' };
  }
  // Unexpected (database unreachable, disk full…): the message only, scrubbed.
  return { exitCode: 1, code: 'INTERNAL_ERROR', messages: [oneLine(scrub(message))], hint: '' };
}

async function runCommand(argv: string[], io: CliIo): Promise<number> {
  const [first] = argv;
  if (first === undefined) {
    io.stderr(overview());
    return 2;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    io.stdout(overview());
    return 0;
  }
  const found = findCommand(argv);
  if ('group' in found) {
    if (argv.includes('--help') || argv.includes('-h') || argv.length === 1) {
      (argv.length === 1 ? io.stderr : io.stdout)(groupHelp(found.group));
      return argv.length === 1 ? 2 : 0;
    }
    throw new UsageError(`unknown command "${found.group} ${argv[1]}"`);
  }
  const { command, rest } = found;
  const parsed = parseCommandLine(command, rest);
  if (parsed === 'help') {
    io.stdout(commandHelp(command));
    return 0;
  }
  const input = command.prepare(parsed);
  const alone = command.alone?.(input);
  if (alone) return (await alone(outputOf(io, parsed.json))) ?? 0;
  if (!command.execute) throw new Error(`${command.name} gave nothing to run for this input`);
  const context = await openContext(io, parsed.json, {
    quiet: command.startsService === true,
    createsDatabase: command.createsDatabase === true,
  });
  let code = 1;
  try {
    code = (await command.execute(context, input)) ?? 0;
    return code;
  } finally {
    await context.close(code !== 0);
  }
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  try {
    return await runCommand(argv, io);
  } catch (error) {
    const { exitCode, code, messages, hint } = failureOf(error);
    // From the raw line, not the parsed one: a script that asked for JSON gets it when the line is wrong too.
    if (argv.includes('--json')) {
      io.stderr(`${toJson({ error: { code, message: messages.join('; ') } })}\n`);
    } else {
      io.stderr(messages.map((message) => `error: ${message}${hint}\n`).join(''));
    }
    return exitCode;
  }
}
