/** `serve`, `start`, `migrate` and `vault rotate-key`: running and maintaining the service. */
import net from 'node:net';
import { type Config, ConfigError, defaultPublicUrl } from '../config.js';
import { addStagingKey, STAGING_KEYS_FILE } from '../vault/keyring.js';
import { lackingKeys, reencryptAll } from '../vault/rotate.js';
import { type Command, defineCommand } from './args.js';
import type { Context } from './context.js';

/**
 * What stops the service cleanly: Ctrl-C, a service manager, and the terminal that started it closing
 * (SIGHUP, which would otherwise end the process mid-request).
 */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Resolves on the first stop signal; a second one gets Node's default handling (exit at once). */
export function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    // The service's sockets keep the process alive; this timer makes sure of it whatever the service does.
    const keepAlive = setInterval(() => {}, 2 ** 30);
    const stop = (signal: NodeJS.Signals) => {
      clearInterval(keepAlive);
      for (const other of STOP_SIGNALS) process.off(other, stop);
      resolve(signal);
    };
    for (const signal of STOP_SIGNALS) process.once(signal, stop);
  });
}

/** A port free on `host` now. */
export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * PORT=0 asks for any free port, but the default public URL (printed, in /openapi.json, given to the demo
 * store) must name the port the service listens on, and the service is built with it before it listens:
 * so the port is chosen here.
 */
async function withChosenPort(config: Config): Promise<Config> {
  if (config.port !== 0 || config.publicUrl !== defaultPublicUrl(0)) return config;
  const port = await freePort(config.host);
  return { ...config, port, publicUrl: defaultPublicUrl(port) };
}

async function runUntilStopped(context: Context, demo: boolean): Promise<number> {
  const { io } = context;
  // The database is migrated; the service opens its own connections.
  await context.close();
  const config = await withChosenPort(context.config);
  // Loaded here, not at the top: the other commands start faster without the HTTP stack.
  const { runService } = await import('../start.js');
  const service = await runService(config, { demo });
  // Before the URL is printed: whoever reads it may send the signal at once.
  const stopped = (io.waitForStop ?? waitForSignal)();
  const applied = context.migrated.length;
  const migrations = applied === 0 ? 'no migrations to apply' : `applied ${applied} migration(s) now`;
  const lines = [
    `Wallet Checkout is listening on ${service.url} (Ctrl-C stops it).`,
    `Database: ${context.db.where}; ${migrations}.`,
    `API reference: ${service.docsUrl}`,
  ];
  if (service.metricsUrl) lines.push(`Metrics (Prometheus): ${service.metricsUrl}`);
  if (service.sandboxGatewayUrl) lines.push(`Sandbox gateway: ${service.sandboxGatewayUrl}`);
  if (service.demo) {
    const { storeUrl, merchant, ownProcessorMerchant } = service.demo;
    lines.push(
      `Demo store: ${storeUrl} (open it in a browser; pay as test.shopper@example.com, code 123456)`,
      `Demo merchant: ${merchant.merchantId}`,
      `Demo API key:  ${merchant.apiKey} (new on every start)`,
      `Own-processor demo merchant: ${ownProcessorMerchant.merchantId}`,
      `Own-processor demo API key:  ${ownProcessorMerchant.apiKey} (new on every start)`,
    );
  }
  context.print(lines.join('\n'), {
    url: service.url,
    docsUrl: service.docsUrl,
    metricsUrl: service.metricsUrl ?? null,
    demo: service.demo ?? null,
    sandboxGatewayUrl: service.sandboxGatewayUrl ?? null,
    database: context.db.where,
    migrationsApplied: applied,
  });
  const signal = await stopped;
  io.stderr(`${signal}: stopping\n`);
  await service.close();
  return 0;
}

const serve = defineCommand<void>({
  name: 'serve',
  summary: 'Run the service alone on PORT (default 4000), until SIGINT, SIGTERM or SIGHUP.',
  details: [
    'Configuration comes from the environment: PORT, HOST, PUBLIC_URL, DATABASE_URL, WALLET_ENV, VAULT_KEYS…',
  ],
  startsService: true,
  createsDatabase: true,
  prepare() {},
  execute: (context) => runUntilStopped(context, false),
});

const start = defineCommand<void>({
  name: 'start',
  summary: 'Run the service with the demo store beside it (what `npm start` does).',
  details: [
    'Staging only: also starts the sandbox gateway on SANDBOX_GATEWAY_URL (default http://127.0.0.1:4010)',
    'and the demo store on http://localhost:DEMO_STORE_PORT (default 4001), with its two demo merchants.',
  ],
  startsService: true,
  createsDatabase: true,
  prepare() {},
  execute: (context) => runUntilStopped(context, true),
});

const migrateCommand = defineCommand<void>({
  name: 'migrate',
  summary: 'Apply pending database migrations to DATABASE_URL.',
  createsDatabase: true,
  prepare() {},
  async execute(context) {
    const applied = context.migrated;
    context.print(applied.length > 0 ? `Applied ${applied.join(', ')}.` : 'The database is up to date.', {
      applied,
    });
    return 0;
  },
});

const vaultRotateKey = defineCommand<void>({
  name: 'vault rotate-key',
  summary: 'Re-encrypt every secret at rest under a new primary key.',
  details: [
    `Staging without VAULT_KEYS: adds a new key in front of ${STAGING_KEYS_FILE} in the data folder.`,
    'With VAULT_KEYS: put the new key first and keep the old ones after it, deploy that to every',
    'process, then run this. Old keys can be removed once it has finished.',
  ],
  prepare() {},
  async execute(context) {
    const { config, io } = context;
    // Before any change: a ring that lacks a key of a value to open would stop part-way.
    const lacking = await lackingKeys(context.db, context.keyRing, { envelopesOnly: true });
    if (lacking !== undefined) throw new ConfigError('VAULT_KEYS', lacking);
    let keyRing = context.keyRing;
    if (!config.vaultKeys) {
      keyRing = addStagingKey(config.dataDir);
    } else if (keyRing.keyIds.length === 1) {
      io.stderr('warning: VAULT_KEYS holds one key, so this re-encrypts under the same key.\n');
    }
    const { reencrypted } = await reencryptAll(context.db, keyRing);
    await context.audit.record({
      actor: context.actor,
      action: 'vault.key_rotated',
      details: { primaryKeyId: keyRing.primaryKeyId, reencrypted },
    });
    const restart = config.vaultKeys
      ? ''
      : '\nRunning services read the key file again when they first meet a value sealed under the new key; no restart is needed.';
    context.print(
      `Re-encrypted ${reencrypted} value(s) under the primary key ${keyRing.primaryKeyId}.${restart}`,
      { primaryKeyId: keyRing.primaryKeyId, reencrypted },
    );
    return 0;
  },
});

export const SERVICE_COMMANDS: Command[] = [serve, start, migrateCommand, vaultRotateKey];
