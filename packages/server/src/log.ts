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

/**
 * More keys whose values scrub() removes from free text: gateways' and clients' names that our own
 * logged objects never use. They stay out of pino's paths, which every log line pays for (these four
 * would add about a quarter to a request's logging).
 */
const TEXT_ONLY_KEYS = ['networkToken', 'cvv2', 'cvc2', 'securityCode'];

const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["idempotency-key"]',
  'res.headers["set-cookie"]',
  ...SENSITIVE_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]),
];

/** A key's words, lowercased: `networkToken`, `network_token` and `Network-Token` are network + token. */
function wordsOf(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[ _.:-]+/)
    .filter(Boolean);
}

// Free text has every key pino redacts but `number`, which is left to CARD_NUMBER: a house or phone
// number is harmless, and a card number is caught by its digits wherever it is.
const TEXT_KEYS = new Set(
  [...SENSITIVE_KEYS.filter((key) => key !== 'number'), ...TEXT_ONLY_KEYS].map((key) =>
    wordsOf(key).join(''),
  ),
);

/**
 * Whether a key in free text names card data or a secret: it is one of TEXT_KEYS in any spelling,
 * or ends with the words of one (`cardCvv`, `client_secret`, `X-Api-Key`, `Proxy-Authorization`,
 * `Set-Cookie`). Whole words only: a `timeSpan` holds no PAN.
 */
function isSensitiveKey(key: string): boolean {
  const words = wordsOf(key);
  return words.some((_word, start) => TEXT_KEYS.has(words.slice(start).join('')));
}

// 12 or more digits, optionally grouped by single spaces, dashes or pluses (a space in a form): anything
// that could be a card number (never shorter than 12 digits, ISO/IEC 7812) or a network token, also when
// glued to letters or underscores (`x4111…`, `4111…abc`) or to more digits; or groups of four digits
// joined by dots (`4111.1111.1111.1111`), which an IPv4 address's groups of at most three never are.
// A match starts only where no digit precedes and every step is forced, so the scan is linear.
const CARD_NUMBER = /(?<!\d)\d(?:[ +-]?\d){11,}|(?<![\d.])\d{4}(?:\.\d{4}){2,}/g;
/**
 * A UUID (the service's session, card and address ids): kept whole, as no card number has its shape,
 * though its digit groups joined by dashes can read as one.
 */
const UUID_OR_CARD_NUMBER = new RegExp(
  `(?<![0-9A-Za-z])([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9A-Za-z])|${CARD_NUMBER.source}`,
  'gi',
);
const API_KEY = /(?<![A-Za-z0-9])sk_(?:test|live)_[A-Za-z0-9]+/g;
const WEBHOOK_SECRET = /(?<![A-Za-z0-9])whsec_[A-Za-z0-9+/=]+/g;
const BEARER = /\bBearer\s+[^\s"',]+/gi;

// Header-like keys whose bare value runs to the end of the line, whatever the scheme: `Authorization:
// Basic dXNl…`, `Digest username="…", response="…"`, `AWS4-HMAC-SHA256 Credential=…, Signature=…`.
// A quoted value is left to scrubKeyValues. The value starts with neither a space nor a quote, so
// giving back spaces never matches and the scan stays linear.
const HEADER = /(?<![\w-])([\w-]{0,32}?(?:authorization|cookie))(\s*[:=][ \t]*)[^\s"'\\][^\r\n]*/gi;

/**
 * `key: value` or `key=value`, the key optionally quoted as in JSON (`"cvv":"987"`) or as in JSON inside a
 * JSON string (`\"cvv\":\"987\"`). The key is at most 64 characters and starts a word.
 */
const KEY = /(?<![\w-])([\w-]{1,64})(\\{0,3}["']?\s*[:=]\s*)/g;

/**
 * The value after a sensitive key: a JSON string (escapes skipped), a JSON string inside a JSON string,
 * a single-quoted string, or a bare word up to the next space or separator (`cvv=123&…`). A string cut
 * short runs to the end of the text. Each form has one way to match, so it is scanned once.
 */
const VALUE =
  /"(?:[^"\\]|\\[\s\S])*"?|\\"(?:[^"\\]|\\[^"\\]|\\\\[^"\\]|\\\\\\[\s\S])*(?:\\")?|'[^']*'?|[^\s"'&;,<>{}()[\]\\]+/y;

const REDACTED = '[redacted]';

/** The value's quotes, kept so that the text keeps its shape, around `[redacted]`. */
function redactedValue(value: string): string {
  const quote = /^\\*["']/.exec(value)?.[0];
  return quote ? `${quote}${REDACTED}${quote}` : REDACTED;
}

/**
 * Replaces the values of sensitive keys. Only a sensitive key's value is read, then skipped: any other
 * key's value is searched like the rest of the text, so `{"message":"bad {\"cvv\":\"987\"}"}` loses its
 * CVV, and every character is read a bounded number of times.
 */
function scrubKeyValues(text: string): string {
  let scrubbed = '';
  let copied = 0;
  KEY.lastIndex = 0;
  for (let key = KEY.exec(text); key; key = KEY.exec(text)) {
    if (!isSensitiveKey(key[1] as string)) continue;
    VALUE.lastIndex = KEY.lastIndex;
    const value = VALUE.exec(text);
    if (!value) continue;
    scrubbed += text.slice(copied, KEY.lastIndex) + redactedValue(value[0]);
    copied = VALUE.lastIndex;
    KEY.lastIndex = VALUE.lastIndex;
  }
  return scrubbed + text.slice(copied);
}

/**
 * A percent-escape of a character that frames a key, a value or a card number's groups: space, `"`, `&`,
 * `'`, `+`, `,`, `-`, `:`, `;`, `=`, `[`, `]`, `{` and `}`, and of `%` itself (`%2522` is a `"` encoded
 * twice). A query or form field that carries JSON (`data=%7B%22cvv%22%3A%22987%22%7D`) or a grouped
 * number (`4111%201111…`) is scrubbed in its decoded form; letters, digits and every other escape stay.
 */
const FRAMING_ESCAPE = /%(2[025-7bcd]|3[abd]|5[bd]|7[bd])/gi;

/** Layers of escapes decoded, at most. */
const ESCAPE_LAYERS = 3;

function decodeFraming(text: string): string {
  let decoded = text;
  for (let layer = 0; layer < ESCAPE_LAYERS && decoded.includes('%'); layer++) {
    const once = decoded.replace(FRAMING_ESCAPE, (_match, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    if (once === decoded) break;
    decoded = once;
  }
  return decoded;
}

/** `<Cvv>987</Cvv>`, with or without a namespace prefix or attributes. */
const XML_ELEMENT = /<([\w.-]{1,64}:)?([\w.-]{1,64})(\s[^<>]{0,256})?>([^<]+)/g;

/**
 * Removes anything shaped like card data or a secret from free text (error messages, raw bodies): card
 * numbers, our API keys and webhook secrets, bearer tokens, and the values of sensitive keys in JSON,
 * query, form, header and XML form, percent-encoded or not. Linear in the text's length: it runs on error
 * paths, over whatever a gateway or a client sent.
 */
export function scrub(text: string): string {
  const scrubbed = scrubValues(decodeFraming(text))
    .replace(BEARER, 'Bearer [redacted]')
    .replace(HEADER, (_match, key: string, separator: string) => `${key}${separator}${REDACTED}`);
  return scrubKeyValues(scrubbed).replace(
    XML_ELEMENT,
    (match, prefix: string | undefined, name: string, attributes: string | undefined) =>
      isSensitiveKey(name) ? `<${prefix ?? ''}${name}${attributes ?? ''}>${REDACTED}` : match,
  );
}

/**
 * Card numbers, API keys and webhook secrets replaced: for text that repeats what a client sent, such as
 * an error message naming an id it could not find. `scrub` does this and more, for text from anywhere.
 */
export function scrubValues(text: string): string {
  return text
    .replace(UUID_OR_CARD_NUMBER, (_match, uuid?: string) => uuid ?? '[card-number]')
    .replace(API_KEY, 'sk_[redacted]')
    .replace(WEBHOOK_SECRET, 'whsec_[redacted]');
}

/** Levels of a logged error's properties read: its own, those of the objects they hold, and so on. */
const ERROR_DEPTH = 6;

/**
 * What a log line shows of a serialized error, scrubbed: its message and stack, and whatever else it
 * carries (a driver's `detail`, a client's `body` or `response`), every string scrubbed and every
 * sensitive key's value redacted, to ERROR_DEPTH levels; bytes are counted, not shown.
 */
function scrubErrorValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.byteLength} bytes]`;
  if (depth === 0) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((item) => scrubErrorValue(item, depth - 1));
  const { toJSON } = value as { toJSON?: unknown };
  if (typeof toJSON === 'function') return scrubErrorValue(toJSON.call(value), depth - 1);
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      isSensitiveKey(key) ? REDACTED : scrubErrorValue(item, depth - 1),
    ]),
  );
}

function scrubError(err: unknown): unknown {
  return scrubErrorValue(pino.stdSerializers.err(err as Error), ERROR_DEPTH);
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
