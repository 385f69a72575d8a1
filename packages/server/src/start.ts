/**
 * What `wallet-checkout serve` and `start` (`npm start`) run: the service, and for `start` in staging the
 * sandbox gateway and the demo store beside it, with the demo store's two merchants ready to use.
 */
import net from 'node:net';
import { SERVICE_ACTOR } from './audit/index.js';
import { type Config, ConfigError } from './config.js';
import { createLogger } from './log.js';
import type { CreateMerchantInput, CredentialType, Merchants } from './merchants/index.js';
import { inUrl, listenAt, type RunningService, type Services, startService } from './server.js';

export interface DemoMerchant {
  merchantId: string;
  /** A new key on every start: keys are stored hashed, so an old one cannot be shown again. */
  apiKey: string;
}

/** What `start` runs beside the service in staging. */
export interface Demo {
  /** The demo store, e.g. `http://localhost:4001`. */
  storeUrl: string;
  /** "Demo Store": Wallet Checkout authorizes its payments. */
  merchant: DemoMerchant;
  /** "Demo Store (own processor)": the processor-agnostic credentials flow. */
  ownProcessorMerchant: DemoMerchant;
}

/** `wallet-checkout serve` and `start`: the service, and with `demo` the demo store for a newcomer. */
export async function runService(
  config: Config,
  options: { demo: boolean },
): Promise<{
  url: string;
  docsUrl: string;
  /** With METRICS_PORT: where Prometheus scrapes. */
  metricsUrl: string | undefined;
  demo: Demo | undefined;
  /** With `demo` in staging: the sandbox gateway started beside the service. */
  sandboxGatewayUrl: string | undefined;
  close(): Promise<void>;
}> {
  const log = createLogger(config.logLevel);
  const withDemo = options.demo && config.env === 'staging';
  if (withDemo && config.demoStorePort === config.port) {
    throw new ConfigError('DEMO_STORE_PORT', `must differ from PORT (${config.port})`);
  }
  // A taken port stops the start before anything runs beside the service, with its one line.
  if (withDemo) {
    if (config.port !== 0) {
      const address = `${inUrl(config.host)}:${config.port}`;
      await assertFree({ port: 'PORT', host: 'HOST' }, address, config.host, config.port);
    }
    const store = { port: 'DEMO_STORE_PORT', host: 'DEMO_STORE_PORT' };
    await assertFree(store, `http://localhost:${config.demoStorePort}`, 'localhost', config.demoStorePort);
  }
  const gateway = withDemo
    ? await startSandboxGatewayAt(config.sandboxGatewayUrl, config.logLevel !== 'silent')
    : undefined;
  let running: RunningService;
  try {
    running = await startService(config, log);
  } catch (error) {
    await gateway?.close();
    throw error;
  }
  log.info({ url: running.url, env: config.env }, 'wallet checkout is running');
  let store: StartedDemo | undefined;
  if (gateway) {
    log.info({ url: gateway.url }, 'the sandbox gateway is running');
    try {
      store = await startDemo(running.services, config, gateway.url);
    } catch (error) {
      await running.close();
      await gateway.close();
      throw error;
    }
    log.info({ url: store.demo.storeUrl }, 'the demo store is running');
  }
  return {
    url: running.url,
    docsUrl: `${config.publicUrl}/docs`,
    metricsUrl: running.metricsUrl,
    demo: store?.demo,
    sandboxGatewayUrl: gateway?.url,
    async close() {
      await store?.close();
      await running.close();
      await gateway?.close();
    },
  };
}

/**
 * The sandbox gateway package (`packages/sandbox-gateway`, built by the root build before this one),
 * loaded only here: `serve` and the tests do without it. The specifier is a variable so that
 * type-checking this package does not need the gateway's build.
 */
const SANDBOX_GATEWAY_PACKAGE = '@wallet-checkout/sandbox-gateway';

interface SandboxGatewayModule {
  startSandboxGateway(options: { port: number; host: string; log?: boolean }): Promise<{
    url: string;
    close(): Promise<void>;
  }>;
}

/** An address taken for a moment: a ConfigError naming its variable when it is in use. */
async function assertFree(
  variables: { port: string; host: string },
  address: string,
  host: string,
  port: number,
): Promise<void> {
  await listenAt(variables, address, async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port, host }, resolve);
    });
    await new Promise((resolve) => probe.close(resolve));
  });
}

/** Starts the sandbox gateway on the host and port of `SANDBOX_GATEWAY_URL`. */
async function startSandboxGatewayAt(
  url: string,
  log: boolean,
): Promise<{ url: string; close(): Promise<void> }> {
  const { hostname, port, protocol } = new URL(url);
  const { startSandboxGateway } = (await import(SANDBOX_GATEWAY_PACKAGE)) as SandboxGatewayModule;
  const variable = 'SANDBOX_GATEWAY_URL';
  return listenAt({ port: variable, host: variable }, url, () =>
    startSandboxGateway({ host: hostname, port: Number(port || (protocol === 'https:' ? 443 : 80)), log }),
  );
}

/**
 * The demo store (`examples/demo-store`, built by the root build after the packages), loaded like the
 * sandbox gateway: only by `start`, by a variable specifier.
 */
const DEMO_STORE_PACKAGE = '@wallet-checkout/demo-store';

interface DemoStoreMerchant {
  merchantId: string;
  apiKey: string;
  webhookSecret: string;
}

interface DemoStoreModule {
  /** The two accounts' settings for a store at `storeUrl` (origin, webhook URLs, shipping, taxes…). */
  demoMerchantSettings(
    storeUrl: string,
  ): Record<'wallet' | 'ownProcessor', CreateMerchantInput & { credentialTypes: CredentialType[] }>;
  startDemoStore(options: {
    host: string;
    port: number;
    serviceUrl: string;
    sandboxGatewayUrl: string;
    merchants: { wallet: DemoStoreMerchant; ownProcessor: DemoStoreMerchant };
  }): Promise<{ url: string; close(): Promise<void> }>;
}

interface StartedDemo {
  demo: Demo;
  close(): Promise<void>;
}

/** Creates or refreshes the demo store's two merchants, then starts the store on localhost. */
async function startDemo(
  services: Services,
  config: Config,
  sandboxGatewayUrl: string,
): Promise<StartedDemo> {
  const { demoMerchantSettings, startDemoStore } = (await import(DEMO_STORE_PACKAGE)) as DemoStoreModule;
  // localhost, not 127.0.0.1: the origin the merchants allow must be the one the browser shows.
  const storeUrl = `http://localhost:${config.demoStorePort}`;
  const settings = demoMerchantSettings(storeUrl);
  const wallet = await demoMerchant(services.merchants, settings.wallet);
  const ownProcessor = await demoMerchant(services.merchants, settings.ownProcessor);
  const variable = 'DEMO_STORE_PORT';
  const store = await listenAt({ port: variable, host: variable }, storeUrl, () =>
    startDemoStore({
      host: 'localhost',
      port: config.demoStorePort,
      serviceUrl: config.publicUrl,
      sandboxGatewayUrl,
      merchants: { wallet, ownProcessor },
    }),
  );
  const publicOf = ({ merchantId, apiKey }: DemoStoreMerchant): DemoMerchant => ({ merchantId, apiKey });
  return {
    demo: { storeUrl: store.url, merchant: publicOf(wallet), ownProcessorMerchant: publicOf(ownProcessor) },
    close: () => store.close(),
  };
}

/**
 * The merchant named `settings.name`, created, or brought up to date with the settings (so a changed
 * DEMO_STORE_PORT takes effect), with a fresh API key and its current webhook secret.
 */
async function demoMerchant(
  merchants: Merchants,
  settings: CreateMerchantInput & { credentialTypes: CredentialType[] },
): Promise<DemoStoreMerchant> {
  const existing = (await merchants.list()).find((merchant) => merchant.name === settings.name);
  if (!existing) {
    const created = await merchants.create(settings, SERVICE_ACTOR);
    return { merchantId: created.merchant.id, apiKey: created.apiKey, webhookSecret: created.webhookSecret };
  }
  const { credentialTypes, ...patch } = settings;
  await merchants.update(existing.id, patch, SERVICE_ACTOR);
  await merchants.approveCredentials(existing.id, credentialTypes, SERVICE_ACTOR);
  for (const key of await merchants.listApiKeys(existing.id)) {
    if (!key.revokedAt) await merchants.revokeApiKey(key.id, SERVICE_ACTOR);
  }
  const { apiKey } = await merchants.createApiKey(existing.id, SERVICE_ACTOR);
  const [webhookSecret] = await merchants.activeWebhookSecrets(existing.id);
  if (!webhookSecret) throw new Error(`merchant ${existing.id} has no active webhook secret`);
  return { merchantId: existing.id, apiKey, webhookSecret };
}
