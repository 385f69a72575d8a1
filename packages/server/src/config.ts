import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Secret } from './secret.js';

export type WalletEnv = 'staging' | 'production';

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  databaseUrl: string;
  env: WalletEnv;
  /** Folder for the embedded database and, in staging, generated vault keys. */
  dataDir: string;
  /** Raw `VAULT_KEYS` value; parsed by the vault's key ring. */
  vaultKeys: string | undefined;
  /** Delays between attempts for ordinary events, in ms. */
  webhookRetryDelaysMs: number[];
  /** Delays between attempts for PAYMENT_CREDENTIALS, in ms: the shopper is waiting. */
  credentialsRetryDelaysMs: number[];
  /** Whether this process delivers webhooks; `off` for API-only processes beside delivering ones. */
  webhookDispatch: boolean;
  /**
   * Worker threads that make the delivery attempts (payload, signature, HTTP) beside the main thread,
   * which keeps the API, leases and every database write; 0 (`off`) makes them on the main thread.
   */
  webhookWorkers: number;
  /** Time allowed for a receiver to answer one delivery attempt, in ms. */
  webhookTimeoutMs: number;
  /** How long a process owns a message it took before another may take it over (after a crash), in ms. */
  webhookLeaseMs: number;
  /** Life of a payment-carousel session, in seconds. */
  sessionTtlSeconds: number;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /**
   * Which proxies' `X-Forwarded-For` names the client (rate limits count per client): none (`false`),
   * all (`true`), the nearest N hops, or these addresses and CIDR ranges.
   */
  trustProxy: boolean | number | string[];
  /** Staging: the sandbox gateway of merchants without a gateway account (JSON style). */
  sandboxGatewayUrl: string;
  /** `start` only: the demo store's port on localhost (its origin is `http://localhost:<port>`). */
  demoStorePort: number;
  /** SMTP server for messages to shoppers, `smtp(s)://[user:password@]host[:port]`; may carry a password. */
  smtpUrl: Secret<string> | undefined;
  /** The From of those messages, `address` or `Name <address>`; set whenever `smtpUrl` is. */
  smtpFrom: string | undefined;
  logLevel: string;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    rule: string,
  ) {
    super(`${variable}: ${rule}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Svix-like schedule: about a day in total before an event is abandoned. */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS = [
  5_000,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
];
/** About ten minutes in total: credentials are useless once the shopper has gone. */
export const DEFAULT_CREDENTIALS_RETRY_DELAYS_MS = [
  1_000,
  5_000,
  15_000,
  30_000,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function delays(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^\d+$/.test(part))) {
    throw new ConfigError(name, `must be comma-separated whole numbers of milliseconds, got "${raw}"`);
  }
  return parts.map(Number);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/**
 * Most delivery threads `on` starts. On two cores, two threads drain a backlog about a third faster than
 * one (docs/benchmarks.md); more than two were not measured, and the main thread, the one writer, claims
 * and records for all of them.
 */
const MAX_DEFAULT_WORKERS = 4;
const MAX_WORKERS = 16;

/** `on` (one per core, at most MAX_DEFAULT_WORKERS), `off` (0), or a count from 1 to MAX_WORKERS. */
function workerThreads(env: Env, name: string): number {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'on') {
    return Math.min(os.availableParallelism(), MAX_DEFAULT_WORKERS);
  }
  if (raw === 'off') return 0;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_WORKERS) {
    throw new ConfigError(
      name,
      `must be on, off or a number of threads from 1 to ${MAX_WORKERS}, got "${raw}"`,
    );
  }
  return Number(raw);
}

function url(name: string, raw: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
    return raw.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
}

function smtpUrl(raw: string | undefined): Secret<string> | undefined {
  if (raw === undefined || raw === '') return undefined;
  // The value may carry a password, so the error never repeats it.
  const rule = 'must be smtp://[user:password@]host[:port] or smtps://…';
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL', rule);
  }
  if ((parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') || !parsed.hostname) {
    throw new ConfigError('SMTP_URL', rule);
  }
  return new Secret(raw);
}

function smtpFrom(raw: string | undefined, withSmtpUrl: boolean): string | undefined {
  if (raw === undefined || raw === '') {
    if (withSmtpUrl) throw new ConfigError('SMTP_FROM', 'is required when SMTP_URL is set');
    return undefined;
  }
  const address = /^[^<>]*<([^<>]+)>$/.exec(raw)?.[1] ?? raw;
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(address.trim())) {
    throw new ConfigError('SMTP_FROM', `must be an e-mail address or "Name <address>", got "${raw}"`);
  }
  return raw;
}

function trustProxy(raw: string | undefined): boolean | number | string[] {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim());
  const valid = (entry: string) => {
    const [address = '', bits, ...rest] = entry.split('/');
    const version = net.isIP(address);
    if (version === 0 || rest.length > 0) return false;
    return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
  };
  if (!entries.every(valid)) {
    throw new ConfigError(
      'TRUST_PROXY',
      `must be true, false, a number of proxy hops, or comma-separated addresses and CIDR ranges, got "${value}"`,
    );
  }
  return entries;
}

function databaseUrl(raw: string): string {
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) return raw;
  if (/^postgres(ql)?:\/\/./.test(raw)) return raw;
  throw new ConfigError('DATABASE_URL', 'must be sqlite:<file> or postgres://…');
}

/** Reads the configuration once from the environment; a bad value throws a ConfigError naming it. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 4000, 0, 65_535);
  const walletEnv = oneOf(env, 'WALLET_ENV', ['staging', 'production'] as const, 'staging');
  const dbUrl = databaseUrl(env.DATABASE_URL || 'sqlite:./data/wallet.db');
  const dataDir = path.resolve(
    env.DATA_DIR || (dbUrl.startsWith('sqlite:') ? path.dirname(dbUrl.slice('sqlite:'.length)) : './data'),
  );
  const vaultKeys = env.VAULT_KEYS || undefined;
  if (walletEnv === 'production' && !vaultKeys) {
    throw new ConfigError('VAULT_KEYS', 'is required when WALLET_ENV=production');
  }
  const publicUrl = url('PUBLIC_URL', env.PUBLIC_URL || `http://localhost:${port}`);
  if (walletEnv === 'production' && !publicUrl.startsWith('https://')) {
    throw new ConfigError('PUBLIC_URL', 'must be https when WALLET_ENV=production');
  }
  const webhookTimeoutMs = integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000);
  const webhookLeaseMs = integer(env, 'WEBHOOK_LEASE_MS', 30_000, 100, 3_600_000);
  if (webhookLeaseMs <= webhookTimeoutMs) {
    // A lease shorter than an attempt would let a second process deliver while the first still waits.
    throw new ConfigError(
      'WEBHOOK_LEASE_MS',
      `must be greater than WEBHOOK_TIMEOUT_MS (${webhookTimeoutMs})`,
    );
  }
  return {
    port,
    host: env.HOST || '127.0.0.1',
    publicUrl,
    databaseUrl: dbUrl,
    env: walletEnv,
    dataDir,
    vaultKeys,
    webhookRetryDelaysMs: delays(env, 'WEBHOOK_RETRY_DELAYS_MS', DEFAULT_WEBHOOK_RETRY_DELAYS_MS),
    credentialsRetryDelaysMs: delays(env, 'CREDENTIALS_RETRY_DELAYS_MS', DEFAULT_CREDENTIALS_RETRY_DELAYS_MS),
    webhookDispatch: oneOf(env, 'WEBHOOK_DISPATCH', ['on', 'off'] as const, 'on') === 'on',
    webhookWorkers: workerThreads(env, 'WEBHOOK_WORKER'),
    webhookTimeoutMs,
    webhookLeaseMs,
    sessionTtlSeconds: integer(env, 'SESSION_TTL_SECONDS', 30 * 60, 10, 7 * 24 * 3600),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    trustProxy: trustProxy(env.TRUST_PROXY),
    sandboxGatewayUrl: url('SANDBOX_GATEWAY_URL', env.SANDBOX_GATEWAY_URL || 'http://127.0.0.1:4010'),
    demoStorePort: integer(env, 'DEMO_STORE_PORT', 4001, 1, 65_535),
    smtpUrl: smtpUrl(env.SMTP_URL),
    smtpFrom: smtpFrom(env.SMTP_FROM, Boolean(env.SMTP_URL)),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
  };
}
