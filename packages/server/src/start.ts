/**
 * What `wallet-checkout serve` and `start` (`npm start`) run: the service, and for `start` in staging the
 * sandbox gateway and the demo store beside it, with the demo store's two merchants ready to use.
 */
import net from 'node:net';
import { SERVICE_ACTOR } from './audit/index.js';
import { type Config, ConfigError, ConfigErrors } from './config.js';
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
  // Taken ports stop the start before anything runs, each with its line: all of them, so that one start
  // shows every variable to change.
  await assertFree(addressesOf(config, withDemo));
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

/** An address the start listens on, the variables that chose it, and how the errors show it. */
interface Address {
  variables: { port: string; host: string };
  shown: string;
  host: string;
  port: number;
}

/** The host and port the sandbox gateway listens on, from `SANDBOX_GATEWAY_URL`. */
function gatewayAddress(url: string): { host: string; port: number } {
  const { hostname, port, protocol } = new URL(url);
  return { host: hostname, port: Number(port || (protocol === 'https:' ? 443 : 80)) };
}

/** Every address a start listens on but those whose port it chooses itself (0). */
function addressesOf(config: Config, withDemo: boolean): Address[] {
  const addresses: Address[] = [];
  const own = (variables: Address['variables'], host: string, port: number) => {
    if (port !== 0) addresses.push({ variables, shown: `${inUrl(host)}:${port}`, host, port });
  };
  own({ port: 'PORT', host: 'HOST' }, config.host, config.port);
  if (config.metrics)
    own({ port: 'METRICS_PORT', host: 'METRICS_HOST' }, config.metrics.host, config.metrics.port);
  if (withDemo) {
    const store = 'DEMO_STORE_PORT';
    const storeUrl = `http://localhost:${config.demoStorePort}`;
    addresses.push({
      variables: { port: store, host: store },
      shown: storeUrl,
      host: 'localhost',
      port: config.demoStorePort,
    });
    const gateway = 'SANDBOX_GATEWAY_URL';
    addresses.push({
      variables: { port: gateway, host: gateway },
      shown: config.sandboxGatewayUrl,
      ...gatewayAddress(config.sandboxGatewayUrl),
    });
  }
  return addresses;
}

/**
 * Each address checked, one after the other: a ConfigError naming the variable of the one that cannot be
 * used, ConfigErrors when several cannot.
 */
async function assertFree(addresses: Address[]): Promise<void> {
  const refused: ConfigError[] = [];
  for (const { variables, shown, host, port } of addresses) {
    try {
      await listenAt(variables, shown, () => assertUsable(host, port));
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      refused.push(error);
    }
  }
  if (refused.length === 1) throw refused[0];
  if (refused.length > 1) throw new ConfigErrors(refused);
}

/** 1 s: a connection to an address of this machine is answered at once, accepted or refused. */
const CONNECT_CHECK_MS = 1_000;

/**
 * Rejects as `listen` would (EADDRNOTAVAIL, ENOTFOUND, EADDRINUSE) when `host` is not this machine's or
 * something listens at `port` there. The host is checked by listening on a port the system picks, the port
 * by connecting to it: listening on it for a moment would take the connections clients open meanwhile (a
 * load balancer's, during a rolling restart) and reset them as it closed, each with its request sent and
 * no answer. A port bound without listening, or taken on another address only, passes here and stops the
 * start at its own listen.
 */
async function assertUsable(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port: 0, host }, resolve);
  });
  await new Promise((resolve) => probe.close(resolve));
  const listening = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(CONNECT_CHECK_MS, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
  if (listening) throw Object.assign(new Error(`${host}:${port} is in use`), { code: 'EADDRINUSE' });
}

/** Starts the sandbox gateway on the host and port of `SANDBOX_GATEWAY_URL`. */
async function startSandboxGatewayAt(
  url: string,
  log: boolean,
): Promise<{ url: string; close(): Promise<void> }> {
  const { startSandboxGateway } = (await import(SANDBOX_GATEWAY_PACKAGE)) as SandboxGatewayModule;
  const variable = 'SANDBOX_GATEWAY_URL';
  return listenAt({ port: variable, host: variable }, url, () =>
    startSandboxGateway({ ...gatewayAddress(url), log }),
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
