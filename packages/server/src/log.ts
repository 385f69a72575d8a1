import pino, { type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Keys whose values are card data or secrets, wherever they appear in a logged object. */
const SENSITIVE_KEYS = [
  'pan',
  'cardNumber',
  'number',
  'token',
  'cvv',
  'cvc',
  'cryptogram',
  'apiKey',
  'secret',
  'webhookSecret',
  'password',
  'pspRawResponse',
  'authorization',
  'cookie',
];

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'res.headers["set-cookie"]',
  ...SENSITIVE_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
];

// 12–19 digits, optionally grouped by single spaces or dashes: anything that could be a card number or
// a network token. Card numbers are never shorter than 12 digits (ISO/IEC 7812).
const CARD_NUMBER = /\b\d(?:[ -]?\d){11,18}\b/g;
const API_KEY = /\bsk_(?:test|live)_[A-Za-z0-9]+/g;
const WEBHOOK_SECRET = /\bwhsec_[A-Za-z0-9+/=]+/g;
const BEARER = /\bBearer\s+[^\s"',]+/gi;

/** Removes anything shaped like card data or a secret from free text (error messages, raw bodies). */
export function scrub(text: string): string {
  return text
    .replace(CARD_NUMBER, '[card-number]')
    .replace(API_KEY, 'sk_[redacted]')
    .replace(WEBHOOK_SECRET, 'whsec_[redacted]')
    .replace(BEARER, 'Bearer [redacted]');
}

function scrubError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  for (const key of ['message', 'stack'] as const) {
    const value = serialized[key];
    if (typeof value === 'string') serialized[key] = scrub(value);
  }
  return serialized;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { err: scrubError, error: scrubError },
    hooks: {
      logMethod(args, method) {
        const scrubbed = args.map((arg) => (typeof arg === 'string' ? scrub(arg) : arg));
        method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
  };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}

/**
 * Fastify gives every request a child logger, and making one runs pino's redaction over its bindings:
 * about 2 % of a credentials request, which usually logs nothing. This one makes the pino child when the
 * request first logs.
 */
export class LazyChildLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.#real().level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#log('error', args);
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }

  info(...args: unknown[]): void {
    this.#log('info', args);
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }

  silent(): void {}

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.#real().child(bindings, options);
  }

  #log(level: pino.Level, args: unknown[]): void {
    const logger = this.#real();
    Reflect.apply(logger[level], logger, args);
  }

  #real(): Logger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }
}
