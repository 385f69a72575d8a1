import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CREDENTIALS_RETRY_DELAYS_MS, loadConfig, reachWarnings } from './config.js';
import { parseKeyRing } from './vault/keyring.js';

/** A regular file that surely exists: this one. */
const A_FILE = fileURLToPath(import.meta.url);

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      publicUrl: 'http://localhost:4000',
      databaseUrl: 'sqlite:./data/wallet.db',
      env: 'staging',
      webhookDispatch: true,
      webhookWorkers: Math.min(os.availableParallelism(), 4),
      webhookTimeoutMs: 15_000,
      webhookLeaseMs: 30_000,
      credentialsRetryDelaysMs: DEFAULT_CREDENTIALS_RETRY_DELAYS_MS,
      demoStorePort: 4001,
      trustProxy: false,
      metrics: undefined,
      retentionDays: 30,
      requestTimeoutMs: 30_000,
    });
    expect(config.dataDir).toMatch(/data$/);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '5000',
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://pay.example/',
      DATABASE_URL: 'postgres://u@db/wallet',
      WALLET_ENV: 'production',
      VAULT_KEYS: 'k1:AAAA',
      WEBHOOK_RETRY_DELAYS_MS: '10, 20,30',
      WEBHOOK_DISPATCH: 'off',
      WEBHOOK_WORKER: 'off',
      DATA_DIR: '/var/lib/wallet',
      DEMO_STORE_PORT: '5001',
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,::1',
      METRICS_PORT: '9464',
      METRICS_HOST: '0.0.0.0',
      RETENTION_DAYS: '90',
      REQUEST_TIMEOUT_MS: '10000',
      WEBHOOK_ALLOWED_NETWORKS: '10.20.0.0/16, fd00:1::/32,192.168.1.7',
    });
    expect(config).toMatchObject({
      port: 5000,
      host: '0.0.0.0',
      publicUrl: 'https://pay.example',
      databaseUrl: 'postgres://u@db/wallet',
      env: 'production',
      vaultKeys: 'k1:AAAA',
      webhookRetryDelaysMs: [10, 20, 30],
      webhookDispatch: false,
      webhookWorkers: 0,
      dataDir: '/var/lib/wallet',
      demoStorePort: 5001,
      trustProxy: ['10.0.0.0/8', '192.168.1.7', '::1'],
      metrics: { host: '0.0.0.0', port: 9464 },
      retentionDays: 90,
      requestTimeoutMs: 10_000,
      webhookAllowedNetworks: ['10.20.0.0/16', 'fd00:1::/32', '192.168.1.7'],
      webhookLoopback: false,
    });
    expect(loadConfig({}).webhookAllowedNetworks).toEqual([]);
    // Loopback webhooks: on where the service is only reached on this machine, off where others reach it.
    expect(loadConfig({}).webhookLoopback).toBe(true);
    expect(loadConfig({ PUBLIC_URL: 'http://127.0.0.1:4000' }).webhookLoopback).toBe(true);
    expect(loadConfig({ PUBLIC_URL: 'http://[::1]:4000' }).webhookLoopback).toBe(true);
    expect(loadConfig({ PUBLIC_URL: 'http://shop.localhost:4000' }).webhookLoopback).toBe(true);
    expect(loadConfig({ PUBLIC_URL: 'https://staging.pay.example' }).webhookLoopback).toBe(false);
    expect(loadConfig({ PUBLIC_URL: 'http://10.0.0.5:4000' }).webhookLoopback).toBe(false);
    expect(
      loadConfig({ PUBLIC_URL: 'https://abc.tunnel.example', WEBHOOK_LOOPBACK: 'on' }).webhookLoopback,
    ).toBe(true);
    expect(loadConfig({ WEBHOOK_LOOPBACK: 'off' }).webhookLoopback).toBe(false);
    expect(loadConfig({ HOST: '::1', PUBLIC_URL: 'http://[::1]:4000' }).webhookLoopback).toBe(true);
    // Others reach it: on every address, behind a proxy, or at an address that only carries 127.0.0.1.
    expect(loadConfig({ HOST: '0.0.0.0' }).webhookLoopback).toBe(false);
    expect(loadConfig({ HOST: '10.0.0.5' }).webhookLoopback).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).webhookLoopback).toBe(false);
    expect(loadConfig({ PUBLIC_URL: 'http://[64:ff9b::7f00:1]:4000' }).webhookLoopback).toBe(false);
    const smtp = { SMTP_URL: 'smtp://mail.example', SMTP_FROM: 'codes@shop.example' };
    expect(reachWarnings(loadConfig({}))).toEqual([]);
    expect(reachWarnings(loadConfig({ WEBHOOK_LOOPBACK: 'off', HOST: '0.0.0.0', ...smtp }))).toEqual([]);
    expect(reachWarnings(loadConfig({ WEBHOOK_LOOPBACK: 'on', HOST: '0.0.0.0', ...smtp }))).toEqual([
      expect.stringMatching(/^WEBHOOK_LOOPBACK is on, and others may reach this service/),
    ]);
    expect(reachWarnings(loadConfig({ HOST: '0.0.0.0' }))).toEqual([
      expect.stringMatching(
        /^SMTP_URL is not set, and others may reach this service .*: GET \/sandbox\/messages shows anyone who asks/,
      ),
    ]);
    expect(loadConfig({ RETENTION_DAYS: 'off' }).retentionDays).toBeUndefined();
    expect(loadConfig({ RETENTION_DAYS: '1' }).retentionDays).toBe(1);
    expect(loadConfig({ RETENTION_DAYS: '3650' }).retentionDays).toBe(3650);
    expect(loadConfig({}).rememberDeviceDays).toBe(30);
    expect(loadConfig({ REMEMBER_DEVICE_DAYS: 'off' }).rememberDeviceDays).toBeUndefined();
    expect(loadConfig({ REMEMBER_DEVICE_DAYS: '365' }).rememberDeviceDays).toBe(365);
    expect(loadConfig({ METRICS_PORT: '0' }).metrics).toEqual({ host: '127.0.0.1', port: 0 });
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ WEBHOOK_WORKER: '3' }).webhookWorkers).toBe(3);
    expect(loadConfig({ WEBHOOK_WORKER: 'on' }).webhookWorkers).toBe(Math.min(os.availableParallelism(), 4));
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });

  it('accepts the edges of each rule', () => {
    const week = String(7 * 24 * 3600 * 1000);
    const delays = loadConfig({ CREDENTIALS_RETRY_DELAYS_MS: `0,${week}` }).credentialsRetryDelaysMs;
    expect(delays).toEqual([0, Number(week)]);
    const fifty = Array.from({ length: 50 }, () => '1').join(',');
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: fifty }).webhookRetryDelaysMs).toHaveLength(50);
    for (const host of ['localhost', '::', '::1', '10.0.0.7', 'db-1.internal.example']) {
      expect(loadConfig({ HOST: host }).host).toBe(host);
    }
    for (const url of [
      'postgres://user:pw@db:5432/wallet',
      'postgresql://u@[::1]:65535/wallet',
      'postgres://user:pw@/wallet?host=/var/run/postgresql',
    ]) {
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    }
    expect(loadConfig({ DATA_DIR: path.join(os.tmpdir(), 'not-yet', 'made') }).dataDir).toBe(
      path.join(os.tmpdir(), 'not-yet', 'made'),
    );
  });

  it('refuses only NODE_TLS_REJECT_UNAUTHORIZED=0, and only in production', () => {
    const production = { WALLET_ENV: 'production', VAULT_KEYS: 'k1:AAAA', PUBLIC_URL: 'https://pay.example' };
    expect(loadConfig({ ...production, NODE_TLS_REJECT_UNAUTHORIZED: '1' }).env).toBe('production');
    expect(loadConfig({ NODE_TLS_REJECT_UNAUTHORIZED: '0' }).env).toBe('staging');
    expect(() => loadConfig({ ...production, NODE_TLS_REJECT_UNAUTHORIZED: '0' })).toThrow(
      /^NODE_TLS_REJECT_UNAUTHORIZED: must not be 0/,
    );
  });

  it('lets the default lease follow a longer WEBHOOK_TIMEOUT_MS, so the time-out alone can be raised', () => {
    const config = loadConfig({ WEBHOOK_TIMEOUT_MS: '60000' });
    expect(config.webhookTimeoutMs).toBe(60_000);
    expect(config.webhookLeaseMs).toBe(75_000);
  });

  it('keeps the data of an in-memory database in ./data, as documented', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).dataDir).toBe(path.resolve('data'));
    expect(loadConfig({ DATABASE_URL: 'postgres://db/wallet' }).dataDir).toBe(path.resolve('data'));
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT: must be a whole number, got "abc"'],
    [{ PORT: '70000' }, 'PORT: must be between 0 and 65535, got 70000'],
    [{ WALLET_ENV: 'prod' }, 'WALLET_ENV: must be one of staging, production, got "prod"'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL: must be sqlite:<file> or postgres://…'],
    [{ DATABASE_URL: 'sqlite:./data/' }, 'DATABASE_URL: must name a file, got the folder ./data/'],
    [{ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL: must be an http(s) URL, got "ftp://x"'],
    [
      { WEBHOOK_RETRY_DELAYS_MS: '1,two' },
      'WEBHOOK_RETRY_DELAYS_MS: must be comma-separated whole numbers of milliseconds, got "1,two"',
    ],
    [
      { CREDENTIALS_RETRY_DELAYS_MS: '1000,99999999999999999999' },
      'CREDENTIALS_RETRY_DELAYS_MS: each delay must be at most 604800000 ms (7 days), got 99999999999999999999',
    ],
    [
      { WEBHOOK_RETRY_DELAYS_MS: '604800001' },
      'WEBHOOK_RETRY_DELAYS_MS: each delay must be at most 604800000 ms (7 days), got 604800001',
    ],
    [
      { WEBHOOK_RETRY_DELAYS_MS: Array.from({ length: 51 }, () => '1').join(',') },
      'WEBHOOK_RETRY_DELAYS_MS: must list at most 50 delays, got 51',
    ],
    [{ HOST: ' ' }, 'HOST: must be a host name or an IP address, got " "'],
    [{ HOST: 'http://example.com' }, 'HOST: must be a host name or an IP address, got "http://example.com"'],
    [
      { DATABASE_URL: 'postgres://user:pw@127.0.0.1:99999/x' },
      'DATABASE_URL: must be a postgres:// URL whose port, if given, is from 1 to 65535',
    ],
    [
      { DATABASE_URL: 'postgres://user:pw@db:0/x' },
      'DATABASE_URL: must be a postgres:// URL whose port, if given, is from 1 to 65535',
    ],
    [{ DATA_DIR: A_FILE }, `DATA_DIR: must be a folder, but ${A_FILE} is a file`],
    [{ DATA_DIR: path.join(A_FILE, 'data') }, `DATA_DIR: must be a folder, but ${A_FILE} is a file`],
    [
      { DATABASE_URL: `sqlite:${path.join(A_FILE, 'wallet.db')}` },
      `DATABASE_URL: the SQLite file must be in a folder, but ${A_FILE} is a file`,
    ],
    [
      { PUBLIC_URL: 'http://h/app?x=1#frag' },
      'PUBLIC_URL: must have no query or fragment, got "http://h/app?x=1#frag"',
    ],
    [{ PUBLIC_URL: 'http://h/app#' }, 'PUBLIC_URL: must have no query or fragment, got "http://h/app#"'],
    [{ WEBHOOK_DISPATCH: 'yes' }, 'WEBHOOK_DISPATCH: must be one of on, off, got "yes"'],
    [
      { WEBHOOK_WORKER: 'true' },
      'WEBHOOK_WORKER: must be on, off or a number of threads from 1 to 16, got "true"',
    ],
    [{ WEBHOOK_WORKER: '0' }, 'WEBHOOK_WORKER: must be on, off or a number of threads from 1 to 16, got "0"'],
    [
      { WEBHOOK_WORKER: '17' },
      'WEBHOOK_WORKER: must be on, off or a number of threads from 1 to 16, got "17"',
    ],
    [
      { TRUST_PROXY: '10.0.0.0/33' },
      'TRUST_PROXY: must be true, false, a number of proxy hops, or comma-separated addresses and CIDR ranges, got "10.0.0.0/33"',
    ],
    [
      { WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8,intranet' },
      'WEBHOOK_ALLOWED_NETWORKS: must be comma-separated address blocks: "intranet" is not an address block such as 10.0.0.0/8',
    ],
    [
      { WEBHOOK_ALLOWED_NETWORKS: 'fd00::/129' },
      'WEBHOOK_ALLOWED_NETWORKS: must be comma-separated address blocks: "fd00::/129" is not an address block such as 10.0.0.0/8',
    ],
    [
      { WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8,0.0.0.0/0' },
      'WEBHOOK_ALLOWED_NETWORKS: must be comma-separated address blocks: "0.0.0.0/0" covers an unspecified address (0.0.0.0); allowed networks never open unspecified, link-local or cloud metadata addresses, nor loopback (WEBHOOK_LOOPBACK does, in staging)',
    ],
    [
      { WEBHOOK_ALLOWED_NETWORKS: '169.254.169.0/24' },
      'WEBHOOK_ALLOWED_NETWORKS: must be comma-separated address blocks: "169.254.169.0/24" covers a link-local address (169.254.0.0); allowed networks never open unspecified, link-local or cloud metadata addresses, nor loopback (WEBHOOK_LOOPBACK does, in staging)',
    ],
    [
      { WEBHOOK_TIMEOUT_MS: '20000', WEBHOOK_LEASE_MS: '20000' },
      'WEBHOOK_LEASE_MS: must be greater than WEBHOOK_TIMEOUT_MS (20000)',
    ],
    [{ WEBHOOK_LOOPBACK: 'yes' }, 'WEBHOOK_LOOPBACK: must be one of on, off, got "yes"'],
    [
      {
        WALLET_ENV: 'production',
        VAULT_KEYS: 'k1:AAAA',
        PUBLIC_URL: 'https://pay.example',
        WEBHOOK_LOOPBACK: 'on',
      },
      'WEBHOOK_LOOPBACK: must be off when WALLET_ENV=production',
    ],
    [{ DEMO_STORE_PORT: '0' }, 'DEMO_STORE_PORT: must be between 1 and 65535, got 0'],
    [{ RETENTION_DAYS: '0' }, 'RETENTION_DAYS: must be a number of days from 1 to 3650, or off, got "0"'],
    [{ RETENTION_DAYS: '30d' }, 'RETENTION_DAYS: must be a number of days from 1 to 3650, or off, got "30d"'],
    [
      { REMEMBER_DEVICE_DAYS: '366' },
      'REMEMBER_DEVICE_DAYS: must be a number of days from 1 to 365, or off, got "366"',
    ],
    [{ METRICS_PORT: 'on' }, 'METRICS_PORT: must be a whole number, got "on"'],
    [{ METRICS_PORT: '4000' }, 'METRICS_PORT: must differ from PORT (4000)'],
    [
      { METRICS_PORT: '9464', METRICS_HOST: 'a b' },
      'METRICS_HOST: must be a host name or an IP address, got "a b"',
    ],
    [{ WALLET_ENV: 'production' }, 'VAULT_KEYS: is required when WALLET_ENV=production'],
    [{ WALLET_ENV: 'production', VAULT_KEYS: 'k:x' }, 'PUBLIC_URL: must be https when WALLET_ENV=production'],
    [
      {
        WALLET_ENV: 'production',
        VAULT_KEYS: 'k1:AAAA',
        PUBLIC_URL: 'https://pay.example',
        NODE_TLS_REJECT_UNAUTHORIZED: '0',
      },
      'NODE_TLS_REJECT_UNAUTHORIZED: must not be 0 when WALLET_ENV=production: Node would then take any certificate on every connection the service makes (webhook receivers, gateways, PostgreSQL, SMTP); trust a private authority with NODE_EXTRA_CA_CERTS instead',
    ],
    [
      { LOG_LEVEL: 'loud' },
      'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ],
    [
      { SMTP_URL: 'https://u:hunter2@mail.example' },
      'SMTP_URL: must be smtp://[user:password@]host[:port] or smtps://…',
    ],
    [{ SMTP_URL: 'smtp://u:hunter2@' }, 'SMTP_URL: must be smtp://[user:password@]host[:port] or smtps://…'],
    [{ SMTP_URL: 'smtp://mail.example' }, 'SMTP_FROM: is required when SMTP_URL is set'],
    [
      { SMTP_URL: 'smtp://mail.example', SMTP_FROM: 'Shop <nope>' },
      'SMTP_FROM: must be an e-mail address or "Name <address>", got "Shop <nope>"',
    ],
  ])('refuses %j with one line naming the variable', (env, message) => {
    const error = (() => {
      try {
        loadConfig(env);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(message);
  });

  it('reads the SMTP server and sender, and keeps the URL (and its password) out of print', () => {
    const config = loadConfig({
      SMTP_URL: 'smtps://codes:hunter2@mail.example:465',
      SMTP_FROM: 'Wallet Checkout <codes@pay.example>',
    });
    expect(config.smtpUrl?.reveal()).toBe('smtps://codes:hunter2@mail.example:465');
    expect(config.smtpFrom).toBe('Wallet Checkout <codes@pay.example>');
    expect(JSON.stringify(config)).not.toContain('hunter2');
    expect(loadConfig({}).smtpUrl).toBeUndefined();
  });
});

describe('the production files in deploy/', () => {
  const DEPLOY = fileURLToPath(new URL('../../../deploy/', import.meta.url));
  const read = (name: string) => fs.readFileSync(path.join(DEPLOY, name), 'utf8');

  it('env.example is a valid production configuration once the vault key it shows how to make is in', () => {
    const example = read('env.example');
    const keyCommand = /^# (node -e .*)$/m.exec(example)?.[1] as string;
    const key = execFileSync('sh', ['-c', keyCommand], { encoding: 'utf8' }).trim();
    expect(parseKeyRing(key).primaryKeyId).toBe('k1');
    // Read the way the operations guide's CLI example reads it (sh, set -a), with nothing else around.
    const env = JSON.parse(
      execFileSync(
        'sh',
        [
          '-c',
          'set -a; . "$1"; VAULT_KEYS="$2"; node -e "console.log(JSON.stringify(process.env))"',
          'sh',
        ].concat(path.join(DEPLOY, 'env.example'), key),
        { encoding: 'utf8', env: { PATH: process.env.PATH } },
      ),
    ) as Record<string, string>;
    const config = loadConfig(env);
    expect(config).toMatchObject({
      env: 'production',
      host: '127.0.0.1',
      publicUrl: 'https://pay.example.com',
      databaseUrl: 'sqlite:/var/lib/wallet-checkout/wallet.db',
      trustProxy: ['127.0.0.1'],
      smtpFrom: 'Wallet Checkout <codes@example.com>',
      metrics: { host: '127.0.0.1', port: 9464 },
    });
    // nginx sends to the port the service listens on, and the unit runs the build's CLI.
    expect(read('nginx.conf')).toContain(`server 127.0.0.1:${config.port};`);
    expect(read('wallet-checkout.service')).toMatch(
      /^ExecStart=\/usr\/bin\/node packages\/server\/dist\/main\.js serve$/m,
    );
    expect(read('wallet-checkout.service')).toMatch(/^StateDirectory=wallet-checkout$/m);
    // A stop takes up to twice WEBHOOK_TIMEOUT_MS (the grace period, then the work it cut and the webhook
    // attempts under way): systemd must not kill the process before.
    const stopSeconds = Number(/^TimeoutStopSec=(\d+)$/m.exec(read('wallet-checkout.service'))?.[1]);
    expect(stopSeconds * 1000).toBeGreaterThan(2 * config.webhookTimeoutMs);
    // Webhook receivers' lookups share libuv's pool with the process's file work: more than its 4 threads.
    const poolThreads = Number(
      /^Environment=UV_THREADPOOL_SIZE=(\d+)$/m.exec(read('wallet-checkout.service'))?.[1],
    );
    expect(poolThreads).toBeGreaterThan(4);
  });
});
