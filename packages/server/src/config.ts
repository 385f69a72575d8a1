import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Secret } from './secret.js';
import { isLoopbackHost, parseNetwork, WebhookDestinations } from './webhooks/url-guard.js';

const WALLET_ENVS = ['staging', 'production'] as const;
export type WalletEnv = (typeof WALLET_ENVS)[number];

/**
 * 30 s for a client to send a whole request: a body is 64 KiB at most by default, which a slow phone
 * sends in a few seconds. Without a limit a client that sends a byte now and then keeps its connection,
 * and its place among the in-flight requests a stop waits for, for ever.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

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
  /** Non-public networks (CIDR blocks) webhooks may be delivered to besides public addresses. */
  webhookAllowedNetworks: string[];
  /**
   * Staging only: webhooks may go to the machine's loopback addresses. On by default when HOST and
   * PUBLIC_URL are on loopback and TRUST_PROXY is unset (a developer's machine, which nobody else
   * reaches), off otherwise: on a staging service others reach, a test webhook to 127.0.0.1 would tell
   * anyone which of the machine's ports answer.
   */
  webhookLoopback: boolean;
  /** Life of a payment-carousel session, in seconds. */
  sessionTtlSeconds: number;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** How long a client has to send a whole request, headers and body, in ms. */
  requestTimeoutMs: number;
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
  /**
   * Production: an `smtp://` server must take STARTTLS before the sign-in and the message (a one-time
   * code signs a shopper in); staging uses it when the server offers it, as a local mail catcher may not.
   */
  smtpRequireTls: boolean;
  logLevel: string;
  /**
   * Days a settled webhook message is kept, with its attempts and, for credentials, its request and
   * external responses, and an abandoned order after its expiry (retention.ts); undefined (`off`) keeps
   * them all. Removed cards' numbers are erased either way.
   */
  retentionDays: number | undefined;
  /**
   * Days "Remember me on this device" signs a shopper in without a code; undefined (`off`): the checkout
   * does not offer it, and devices remembered before no longer sign anyone in.
   */
  rememberDeviceDays: number | undefined;
  /** Where `GET /metrics` (Prometheus) listens; no port, no metrics. */
  metrics: { host: string; port: number } | undefined;
  /** Commands only: the person the audit trail names for their actions (`WALLET_OPERATOR`), if set. */
  operator: string | undefined;
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

/** Several ConfigErrors one check found (every busy port of a start), reported together: one line each. */
export class ConfigErrors extends Error {
  constructor(readonly errors: ConfigError[]) {
    super(errors.map((error) => error.message).join('\n'));
    this.name = 'ConfigErrors';
  }
}

type Env = Record<string, string | undefined>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Svix-like schedule: about 18 hours in total before an event is abandoned. */
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

/** 7 days: longer than any receiver waits for an event; unbounded, the due time overflows its integer column. */
const MAX_RETRY_DELAY_MS = 7 * 24 * HOUR;
/** Every attempt is recorded; 50 is far beyond any useful schedule. */
const MAX_RETRY_DELAYS = 50;

function delays(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^\d+$/.test(part))) {
    throw new ConfigError(name, `must be comma-separated whole numbers of milliseconds, got "${raw}"`);
  }
  if (parts.length > MAX_RETRY_DELAYS) {
    throw new ConfigError(name, `must list at most ${MAX_RETRY_DELAYS} delays, got ${parts.length}`);
  }
  const tooLong = parts.find((part) => Number(part) > MAX_RETRY_DELAY_MS);
  if (tooLong !== undefined) {
    throw new ConfigError(
      name,
      `each delay must be at most ${MAX_RETRY_DELAY_MS} ms (7 days), got ${tooLong}`,
    );
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
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${raw}"`);
  }
  // Paths are appended to it (`/docs`, `/sdk/…`), which a query or fragment would swallow.
  if (/[?#]/.test(raw)) throw new ConfigError(name, `must have no query or fragment, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** The public URL when PUBLIC_URL is unset. */
export function defaultPublicUrl(port: number): string {
  return `http://localhost:${port}`;
}

/** A host name or an IP address, checked here because a bad one only fails at listen, as ENOTFOUND. */
function host(env: Env, name: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return '127.0.0.1';
  const label = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
  if (net.isIP(raw) === 0 && !(raw.length <= 253 && raw.split('.').every((part) => label.test(part)))) {
    throw new ConfigError(name, `must be a host name or an IP address, got "${raw}"`);
  }
  return raw;
}

/** 30 days: a month to look a request up or resend a webhook, as long as Stripe lists events. */
const DEFAULT_RETENTION_DAYS = 30;

/** 30 days: a shopper who buys monthly rarely types a code; a lost device stops within a month. */
const DEFAULT_REMEMBER_DEVICE_DAYS = 30;

/** A number of days from 1 to `max`, or `off` (undefined); unset or empty, `fallback`. */
function daysOrOff(env: Env, name: string, fallback: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === 'off') return undefined;
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new ConfigError(name, `must be a number of days from 1 to ${max}, or off, got "${raw}"`);
  }
  return Number(raw);
}

/**
 * METRICS_PORT (0 for any free one) and METRICS_HOST: on 127.0.0.1 unless told otherwise, since request
 * counts by route tell how much a shop sells; unset, nothing listens.
 */
function metricsAddress(env: Env, port: number): { host: string; port: number } | undefined {
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return undefined;
  const metricsPort = integer(env, 'METRICS_PORT', 0, 0, 65_535);
  if (metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${port})`);
  }
  return { host: host(env, 'METRICS_HOST'), port: metricsPort };
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

/**
 * The SMTP settings alone, checked as `loadConfig` checks them: for `smtp test`, which needs nothing
 * else and runs where the service's other settings (its keys, in production) may not be.
 */
export function loadSmtpSettings(
  env: Record<string, string | undefined>,
): Pick<Config, 'smtpUrl' | 'smtpFrom' | 'smtpRequireTls'> {
  return {
    smtpUrl: smtpUrl(env.SMTP_URL),
    smtpFrom: smtpFrom(env.SMTP_FROM, Boolean(env.SMTP_URL)),
    smtpRequireTls: oneOf(env, 'WALLET_ENV', WALLET_ENVS, 'staging') === 'production',
  };
}

/** 100 characters: a name or an e-mail address, never a paragraph. */
const MAX_OPERATOR_LENGTH = 100;

function operator(raw: string | undefined): string | undefined {
  const value = raw?.trim() ?? '';
  if (value === '') return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (value.length > MAX_OPERATOR_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new ConfigError(
      'WALLET_OPERATOR',
      `must be at most ${MAX_OPERATOR_LENGTH} characters, without control characters`,
    );
  }
  return value;
}

function trustProxy(raw: string | undefined): boolean | number | string[] {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim());
  if (!entries.every((entry) => parseNetwork(entry) !== undefined)) {
    throw new ConfigError(
      'TRUST_PROXY',
      `must be true, false, a number of proxy hops, or comma-separated addresses and CIDR ranges, got "${value}"`,
    );
  }
  return entries;
}

function databaseUrl(raw: string): string {
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) {
    if (/[\\/]$/.test(raw)) {
      throw new ConfigError(
        'DATABASE_URL',
        `must name a file, got the folder ${raw.slice('sqlite:'.length)}`,
      );
    }
    return raw;
  }
  if (!/^postgres(ql)?:\/\/./.test(raw)) {
    throw new ConfigError('DATABASE_URL', 'must be sqlite:<file> or postgres://…');
  }
  // The value may carry a password, so the error never repeats it.
  const rule = 'must be a postgres:// URL whose port, if given, is from 1 to 65535';
  let parsed: URL;
  try {
    // The driver also takes an empty host (`user@/db?host=/socket/folder`), which URL does not.
    parsed = new URL(raw.replace('@/', '@localhost/'));
  } catch {
    throw new ConfigError('DATABASE_URL', rule);
  }
  if (parsed.port === '0') throw new ConfigError('DATABASE_URL', rule);
  return raw;
}

/** A comma-separated list of address blocks (`10.0.0.0/8, fd00::/8`); empty when unset. */
function networks(env: Env, name: string): string[] {
  const value = env[name]?.trim() ?? '';
  if (value === '') return [];
  const entries = value.split(',').map((entry) => entry.trim());
  try {
    new WebhookDestinations('production', { allowedNetworks: entries, loopback: false });
  } catch (error) {
    throw new ConfigError(name, `must be comma-separated address blocks: ${(error as Error).message}`);
  }
  return entries;
}

type Reach = Pick<Config, 'host' | 'publicUrl' | 'trustProxy'>;

/** Nobody but this machine reaches the service: it listens on loopback, as its public URL says, with no proxy. */
function onlyThisMachine({ host, publicUrl, trustProxy }: Reach): boolean {
  return isLoopbackHost(host) && isLoopbackHost(new URL(publicUrl).hostname) && trustProxy === false;
}

/** `on` or `off`; by default on in staging where only this machine reaches the service. */
function loopback(env: Env, name: string, walletEnv: WalletEnv, reach: Reach): boolean {
  const local = walletEnv === 'staging' && onlyThisMachine(reach);
  const value = oneOf(env, name, ['on', 'off'] as const, local ? 'on' : 'off') === 'on';
  if (value && walletEnv === 'production') {
    throw new ConfigError(name, 'must be off when WALLET_ENV=production');
  }
  return value;
}

/** The data folder: DATA_DIR, else the SQLite file's folder, else `./data` (PostgreSQL, in-memory SQLite). */
function dataFolder(env: Env, dbUrl: string): string {
  const file = dbUrl.startsWith('sqlite:') ? dbUrl.slice('sqlite:'.length) : undefined;
  const onDisk = file !== undefined && file !== ':memory:';
  const folder = path.resolve(env.DATA_DIR || (onDisk ? path.dirname(file) : './data'));
  // The folder is created when first needed; a file in its place, or in place of a parent, would only
  // fail then, as EEXIST or ENOTDIR.
  let existing = folder;
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  if (fs.existsSync(existing) && !fs.statSync(existing).isDirectory()) {
    throw env.DATA_DIR
      ? new ConfigError('DATA_DIR', `must be a folder, but ${existing} is a file`)
      : new ConfigError('DATABASE_URL', `the SQLite file must be in a folder, but ${existing} is a file`);
  }
  return folder;
}

/** Reads the configuration once from the environment; a bad value throws a ConfigError naming it. */
export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 4000, 0, 65_535);
  const walletEnv = oneOf(env, 'WALLET_ENV', WALLET_ENVS, 'staging');
  const dbUrl = databaseUrl(env.DATABASE_URL || 'sqlite:./data/wallet.db');
  const dataDir = dataFolder(env, dbUrl);
  const vaultKeys = env.VAULT_KEYS || undefined;
  if (walletEnv === 'production' && !vaultKeys) {
    throw new ConfigError('VAULT_KEYS', 'is required when WALLET_ENV=production');
  }
  const publicUrl = url('PUBLIC_URL', env.PUBLIC_URL || defaultPublicUrl(port));
  if (walletEnv === 'production' && !publicUrl.startsWith('https://')) {
    throw new ConfigError('PUBLIC_URL', 'must be https when WALLET_ENV=production');
  }
  if (walletEnv === 'production' && env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new ConfigError(
      'NODE_TLS_REJECT_UNAUTHORIZED',
      'must not be 0 when WALLET_ENV=production: Node would then take any certificate on every connection the service makes (webhook receivers, gateways, PostgreSQL, SMTP); trust a private authority with NODE_EXTRA_CA_CERTS instead',
    );
  }
  const listenHost = host(env, 'HOST');
  const proxies = trustProxy(env.TRUST_PROXY);
  const webhookLoopback = loopback(env, 'WEBHOOK_LOOPBACK', walletEnv, {
    host: listenHost,
    publicUrl,
    trustProxy: proxies,
  });
  const webhookTimeoutMs = integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000);
  // The time-out and 15 s more, to build the payload and write the result: 30 s with the defaults.
  const webhookLeaseMs = integer(env, 'WEBHOOK_LEASE_MS', webhookTimeoutMs + 15_000, 100, 3_600_000);
  if (webhookLeaseMs <= webhookTimeoutMs) {
    // A lease shorter than an attempt would let a second process deliver while the first still waits.
    throw new ConfigError(
      'WEBHOOK_LEASE_MS',
      `must be greater than WEBHOOK_TIMEOUT_MS (${webhookTimeoutMs})`,
    );
  }
  return {
    port,
    host: listenHost,
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
    webhookAllowedNetworks: networks(env, 'WEBHOOK_ALLOWED_NETWORKS'),
    webhookLoopback,
    sessionTtlSeconds: integer(env, 'SESSION_TTL_SECONDS', 30 * 60, 10, 7 * 24 * 3600),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', REQUEST_TIMEOUT_MS, 500, 300_000),
    trustProxy: proxies,
    sandboxGatewayUrl: url('SANDBOX_GATEWAY_URL', env.SANDBOX_GATEWAY_URL || 'http://127.0.0.1:4010'),
    demoStorePort: integer(env, 'DEMO_STORE_PORT', 4001, 1, 65_535),
    ...loadSmtpSettings(env),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    retentionDays: daysOrOff(env, 'RETENTION_DAYS', DEFAULT_RETENTION_DAYS, 3650),
    rememberDeviceDays: daysOrOff(env, 'REMEMBER_DEVICE_DAYS', DEFAULT_REMEMBER_DEVICE_DAYS, 365),
    metrics: metricsAddress(env, port),
    operator: operator(env.WALLET_OPERATOR),
  };
}

/**
 * The warnings a start gives when others may reach a staging service (HOST, PUBLIC_URL or TRUST_PROXY say
 * so) that is open to this machine only by default: WEBHOOK_LOOPBACK=on opens this machine's ports, and
 * without SMTP_URL every shopper's one-time codes are served at GET /sandbox/messages.
 */
export function reachWarnings(config: Config): string[] {
  if (config.env !== 'staging' || onlyThisMachine(config)) return [];
  const reached = 'others may reach this service (HOST, PUBLIC_URL or TRUST_PROXY say so)';
  const warnings: string[] = [];
  if (config.webhookLoopback) {
    warnings.push(
      `WEBHOOK_LOOPBACK is on, and ${reached}: any staging merchant's test webhook can reach whatever listens on this machine's loopback`,
    );
  }
  if (config.smtpUrl === undefined) {
    warnings.push(
      `SMTP_URL is not set, and ${reached}: GET /sandbox/messages shows anyone who asks the one-time codes of every shopper enrolled here, and POST /sandbox/sessions lets any merchant here make a session, and so take credentials, for any of those shoppers; enrol test addresses only, or set SMTP_URL, which limits both to them`,
    );
  }
  return warnings;
}
