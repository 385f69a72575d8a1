/**
 * Declarative commands and their argument parsing (node:util parseArgs, strict). A mistake in the command
 * line is a UsageError: exit code 2, one line naming the offending flag or argument.
 */
import { parseArgs } from 'node:util';
import type { Context, Output } from './context.js';

export class UsageError extends Error {
  constructor(
    message: string,
    /** The command whose `--help` explains the mistake, when known. */
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** Shown in help after the flag, e.g. `URL`. */
  value?: string;
  /** The values the option takes, checked when the line is parsed; help shows them when `value` is not set. */
  choices?: readonly string[];
  description: string;
}

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface Parsed {
  values: OptionValues;
  positionals: string[];
  json: boolean;
}

export interface CommandSpec<Input = unknown> {
  /** One or two words, e.g. `merchant create`. */
  name: string;
  summary: string;
  /** Positional arguments, in order, e.g. `['merchantId']`. */
  positionals?: string[];
  options?: Record<string, OptionSpec>;
  /** Extra lines for `--help`. */
  details?: string[];
  /** Runs the service, which says in its own log what its start finds (the context then stays quiet). */
  startsService?: boolean;
  /**
   * Works on a fresh machine: makes the embedded database when there is none. Every other command works on
   * the service's data and refuses to run without its database.
   */
  createsDatabase?: boolean;
  /** Turns the parsed line into the command's input; throws a UsageError on a bad combination. */
  prepare(parsed: Parsed): Input;
}

export interface Command<Input = unknown> extends CommandSpec<Input> {
  /**
   * Runs with an open context; returns the exit code (0 when nothing is returned). Absent for a command
   * whose `alone` runs every input.
   */
  execute?(context: Context, input: Input): Promise<number | undefined>;
  /**
   * For an input that needs no database (`webhooks listen --secret`, `smtp test`), what runs instead of
   * `execute`, opening nothing: no data folder, key ring or database file is made.
   */
  alone?(input: Input): ((output: Output) => Promise<number | undefined>) | undefined;
}

/** Keeps each command's input type checked while the table holds them all. */
export function defineCommand<Input>(command: Command<Input>): Command {
  return command as unknown as Command;
}

const COMMON_OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: 'machine-readable output (JSON on one line)' },
  help: { type: 'boolean', description: 'show this help' },
};

/**
 * Positional arguments that may be given as a flag instead, as other commands take them: `apikey list
 * --merchant <id>` like `order list --merchant <id>`.
 */
const POSITIONAL_FLAGS: Record<string, OptionSpec & { flag: string }> = {
  merchantId: {
    flag: 'merchant',
    type: 'string',
    value: 'ID',
    description: 'the merchant, in place of <merchantId>',
  },
};

/** The command's options: the flags its positionals may be given as, its own, and the common ones. */
function optionsOf(spec: CommandSpec): Record<string, OptionSpec> {
  const flags = (spec.positionals ?? []).flatMap((name) => {
    const alias = POSITIONAL_FLAGS[name];
    return alias ? [[alias.flag, alias] as const] : [];
  });
  return { ...Object.fromEntries(flags), ...spec.options, ...COMMON_OPTIONS };
}

/** The command's positionals in order, each taken from its flag when given, else from the line. */
function positionalsOf(spec: CommandSpec, values: OptionValues, given: string[]): string[] {
  const names = spec.positionals ?? [];
  const rest = [...given];
  const positionals: string[] = [];
  const missing: string[] = [];
  const byFlag: string[] = [];
  for (const name of names) {
    const flag = POSITIONAL_FLAGS[name]?.flag;
    const flagged = flag === undefined ? undefined : stringOption(values, flag);
    if (flagged !== undefined) byFlag.push(`<${name}> is given by --${flag}`);
    const value = flagged ?? rest.shift();
    if (value === undefined) missing.push(`<${name}>`);
    else positionals.push(value);
  }
  if (missing.length > 0) throw new UsageError(`"${spec.name}" needs ${missing.join(' ')}`, spec.name);
  if (rest.length > 0) {
    const already = byFlag.length > 0 ? `: ${byFlag.join(', ')}` : '';
    throw new UsageError(`unexpected argument "${rest[0]}" for "${spec.name}"${already}`, spec.name);
  }
  return positionals;
}

function firstQuoted(message: string): string | undefined {
  return /'([^' ]+)/.exec(message)?.[1];
}

/**
 * parseArgs reads `--overlap-hours -1` as an option missing its value. A negative number is never an
 * option, so it is joined to its option (`--overlap-hours=-1`) and reaches the command's own check, which
 * names the rule it breaks.
 */
function joinNegativeNumbers(args: string[], options: Record<string, OptionSpec>): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    const next = args[index + 1];
    if (arg === '--') return [...joined, ...args.slice(index)];
    if (arg.startsWith('--') && options[arg.slice(2)]?.type === 'string' && /^-\.?\d/.test(next ?? '')) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** The first option that takes one value but was given more than once: parseArgs would keep the last. */
function repeatedSingleOption(
  options: Record<string, OptionSpec>,
  tokens: ReturnType<typeof parseArgs>['tokens'] = [],
): string | undefined {
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || options[token.name]?.type !== 'string' || options[token.name]?.multiple) {
      continue;
    }
    if (seen.has(token.name)) return token.name;
    seen.add(token.name);
  }
  return undefined;
}

/** Parses the arguments after the command name; `--help` wins over every other mistake. */
export function parseCommandLine(spec: CommandSpec, args: string[]): Parsed | 'help' {
  if (args.includes('--help') || args.includes('-h')) return 'help';
  const options = optionsOf(spec);
  let result: ReturnType<typeof parseArgs>;
  try {
    result = parseArgs({
      args: joinNegativeNumbers(args, options),
      options: Object.fromEntries(
        Object.entries(options).map(([name, option]) => [
          name,
          { type: option.type, multiple: option.multiple ?? false },
        ]),
      ),
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    const flag = firstQuoted(message) ?? '?';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      throw new UsageError(`unknown option ${flag} for "${spec.name}"`, spec.name);
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      throw new UsageError(
        message.includes('does not take an argument')
          ? `option ${flag} takes no value`
          : `option ${flag} needs a value`,
        spec.name,
      );
    }
    throw error;
  }
  const repeated = repeatedSingleOption(options, result.tokens);
  if (repeated) throw new UsageError(`option --${repeated} is given more than once`, spec.name);
  const values = result.values as OptionValues;
  for (const [name, option] of Object.entries(options)) {
    const given = [values[name]].flat().filter((value) => typeof value === 'string');
    const wrong = option.choices && given.find((value) => !option.choices?.includes(value));
    if (wrong !== undefined) {
      throw new UsageError(
        `--${name} must be one of ${option.choices?.join(', ')}, got "${wrong}"`,
        spec.name,
      );
    }
  }
  const positionals = positionalsOf(spec, values, result.positionals);
  return { values, positionals, json: values.json === true };
}

export function usageLine(spec: CommandSpec): string {
  const positionals = (spec.positionals ?? []).map((name) => {
    const alias = POSITIONAL_FLAGS[name];
    return alias ? `(<${name}> | --${alias.flag} ${alias.value})` : `<${name}>`;
  });
  return ['wallet-checkout', spec.name, ...positionals, '[options]'].join(' ');
}

export function commandHelp(spec: CommandSpec): string {
  const options = optionsOf(spec);
  const flags = Object.entries(options).map(([name, option]) => {
    const value = option.type === 'string' ? ` ${option.value ?? option.choices?.join('|') ?? 'VALUE'}` : '';
    const repeat = option.multiple ? ' (repeatable)' : '';
    return [`--${name}${value}`, `${option.description}${repeat}`] as const;
  });
  const width = Math.max(...flags.map(([flag]) => flag.length));
  return [
    `Usage: ${usageLine(spec)}`,
    '',
    spec.summary,
    ...(spec.details ? ['', ...spec.details] : []),
    '',
    'Options:',
    ...flags.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`),
    '',
  ].join('\n');
}

// --- helpers for `prepare` ---

export function stringOption(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function listOption(values: OptionValues, name: string): string[] | undefined {
  const value = values[name];
  return Array.isArray(value) ? value : undefined;
}

export function requiredOption(values: OptionValues, name: string, command: string): string {
  const value = stringOption(values, name);
  if (value === undefined) throw new UsageError(`"${command}" needs --${name}`, command);
  return value;
}

/** An RFC 3339 time with its zone, as the API's `since` takes: a time without one would be the machine's. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** The option's time in ms since the epoch, or undefined when it is not given. */
export function timeOption(values: OptionValues, name: string, command: string): number | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  if (!RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
    throw new UsageError(
      `--${name} must be an RFC 3339 time with its zone, such as 2026-11-25T08:00:00Z`,
      command,
    );
  }
  return Date.parse(value);
}

/** The option's whole number from `min` to `max`, or undefined when it is not given. */
export function wholeNumberOption(
  values: OptionValues,
  name: string,
  range: { min: number; max: number },
  command: string,
): number | undefined {
  const value = stringOption(values, name);
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < range.min || number > range.max) {
    throw new UsageError(
      `--${name} must be a whole number from ${range.min} to ${range.max}, got "${value}"`,
      command,
    );
  }
  return number;
}

/** `A,B` → `['A', 'B']`; an empty value gives `[]`. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** A comma-separated option whose every part is one of `choices`; another part is a usage error. */
export function choiceList<T extends string>(
  value: string,
  flag: string,
  choices: readonly T[],
  command: string,
): T[] {
  const parts = commaList(value);
  const wrong = parts.find((part) => !(choices as readonly string[]).includes(part));
  if (wrong !== undefined) {
    throw new UsageError(
      `--${flag} must list ${choices.join(', ')} or several of them, comma-separated, got "${wrong}"`,
      command,
    );
  }
  return parts as T[];
}

/** Refuses a name given twice in a repeatable `NAME=…` option, where the last would silently win. */
export function refuseRepeatedNames(flag: string, names: string[], command: string): void {
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) throw new UsageError(`--${flag} ${repeated} is given more than once`, command);
}

/** `NAME=123` → `['NAME', 123]`, split at the last `=`, the number a whole one. */
export function namedWholeNumber(flag: string, raw: string, form: string, command: string): [string, number] {
  const at = raw.lastIndexOf('=');
  const name = raw.slice(0, at).trim();
  const number = raw.slice(at + 1).trim();
  if (at < 1 || name === '' || !/^\d+$/.test(number)) {
    throw new UsageError(`--${flag} must be ${form}, got "${raw}"`, command);
  }
  return [name, Number(number)];
}
