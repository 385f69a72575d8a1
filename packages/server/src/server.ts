/**
 * The composition root: builds every part of the service from the configuration, wires them together
 * and runs them. Nothing else constructs long-lived objects.
 */
import type { FastifyInstance } from 'fastify';
import { checkoutAssetRoutes, readCheckoutAssets } from './api/checkout/assets.js';
import { createOrderRoute } from './api/checkout/orders.create.js';
import { checkoutPageRoute } from './api/checkout/page.js';
import { checkoutApiRoutes } from './api/checkout/shopper-routes.js';
import { shopperLookupRoute } from './api/checkout/shoppers.lookup.js';
import { credentialsLookupRoutes } from './api/merchant/credentials-requests.get.js';
import { orderGetRoute } from './api/merchant/orders.get.js';
import { webhookRoutes } from './api/merchant/webhooks.js';
import { sandboxMessagesRoute } from './api/sandbox/messages.js';
import { sandboxSessionsRoute } from './api/sandbox/sessions.js';
import { SDK_PACKAGE_DIR, sdkRoutes } from './api/sdk.js';
import { buildApp } from './app.js';
import { Checkout } from './checkout/index.js';
import { type Config, ConfigError } from './config.js';
import { DbClock } from './db/clock.js';
import { createDb, type Db } from './db/index.js';
import { migrate } from './db/migrate.js';
import { GatewayAccounts } from './gateways/index.js';
import { IdempotencyStore } from './idempotency/store.js';
import { createLogger, type Logger } from './log.js';
import { type CreateMerchantInput, type CredentialType, Merchants } from './merchants/index.js';
import { ORDER_EVENTS, OrderPayloadBuilder, Orders } from './orders/index.js';
import { CredentialsService, PAYMENT_CREDENTIALS } from './payments/credentials.js';
import { ExternalResponseService } from './payments/external-response.js';
import { CredentialsLookup } from './payments/lookup.js';
import { CredentialsPayloadBuilder } from './payments/payload.js';
import { PaymentsRepo } from './payments/repo.js';
import { RateLimits } from './rate-limits.js';
import { seedStaging } from './sandbox/seed.js';
import { createSenders, type Senders, ShopperAuth } from './shopper-auth/index.js';
import { type KeyRing, loadKeyRing } from './vault/keyring.js';
import { SandboxTokenService } from './vault/sandbox-token-service.js';
import { CardVault } from './vault/vault.js';
import { Sessions, Wallet } from './wallet/index.js';
import {
  CONNECTIONS_PER_ORIGIN,
  Dispatcher,
  insertMessages,
  type MessageForPayload,
  type NewMessage,
  newMessage,
  SpreadSender,
  Webhooks,
  WorkerSender,
} from './webhooks/index.js';

/** 10 min between sweeps of expired idempotency keys and orders left open past their life. */
const SWEEP_INTERVAL_MS = 10 * 60_000;
/** How often the SQLite WAL is copied back into the database file, off the event loop. */
const WAL_CHECKPOINT_INTERVAL_MS = 100;

export interface Services {
  config: Config;
  log: Logger;
  db: Db;
  /** The database's time, in which webhook leases and due times are kept. */
  clock: DbClock;
  /** Rate-limit counters shared by every process. */
  rateLimits: RateLimits;
  keyRing: KeyRing;
  merchants: Merchants;
  wallet: Wallet;
  sessions: Sessions;
  vault: CardVault;
  idempotency: IdempotencyStore;
  payments: PaymentsRepo;
  credentials: CredentialsService;
  externalResponses: ExternalResponseService;
  credentialsLookup: CredentialsLookup;
  orders: Orders;
  dispatcher: Dispatcher;
  /** The delivery worker threads' handles (WEBHOOK_WORKER); none when it is off. */
  deliveryWorkers: WorkerSender[];
  webhooks: Webhooks;
  senders: Senders;
  shopperAuth: ShopperAuth;
  gateways: GatewayAccounts;
  checkout: Checkout;
}

export async function createServices(config: Config, log: Logger): Promise<Services> {
  const db = createDb(config.databaseUrl, {
    onIdleError: (error) =>
      log.warn({ err: error }, 'an idle database connection failed; it will be replaced'),
    backgroundCheckpoints: {
      intervalMs: WAL_CHECKPOINT_INTERVAL_MS,
      onError: (error) => log.error({ err: error }, 'the WAL checkpoint failed; it is retried'),
    },
  });
  await migrate(db);
  const clock = new DbClock(db);
  await clock.start((error) =>
    log.warn({ err: error }, "could not read the database's clock; keeping the last offset"),
  );
  const keyRing = loadKeyRing({
    vaultKeys: config.vaultKeys,
    dataDir: config.dataDir,
    warn: (message) => log.warn(message),
  });
  const merchants = new Merchants({ db, keyRing, env: config.env });
  const vault = new CardVault(db, keyRing);
  const tokens = new SandboxTokenService(db, keyRing, vault);
  const wallet = new Wallet(db, vault);
  const sessions = new Sessions(db);
  const idempotency = new IdempotencyStore(db);
  const payments = new PaymentsRepo(db);
  const credentialsPayload = new CredentialsPayloadBuilder({
    repo: payments,
    merchants,
    wallet,
    vault,
    tokens,
  });

  // The workers build the same payloads as below, each from its own read-only handle on the same database,
  // and share the process's connections to each receiver (rounded down: never more than it allows).
  const deliveryWorkers = Array.from(
    { length: config.webhookWorkers },
    () =>
      new WorkerSender({
        log,
        worker: {
          databaseUrl: config.databaseUrl,
          vaultKeys: config.vaultKeys,
          dataDir: config.dataDir,
          env: config.env,
          timeoutMs: config.webhookTimeoutMs,
          connectionsPerOrigin: Math.floor(CONNECTIONS_PER_ORIGIN / config.webhookWorkers),
        },
        remembered: (message) =>
          message.eventName === PAYMENT_CREDENTIALS ? credentialsPayload.take(message.subjectId) : undefined,
        networkTokens: { provision: (card) => tokens.networkToken(card) },
      }),
  );
  const dispatcher = new Dispatcher({
    db,
    log,
    env: config.env,
    timeoutMs: config.webhookTimeoutMs,
    retryDelaysMs: { default: config.webhookRetryDelaysMs, credentials: config.credentialsRetryDelaysMs },
    leaseMs: config.webhookLeaseMs,
    now: clock.now,
    endpoints: {
      async resolve(merchantId) {
        const merchant = await merchants.get(merchantId);
        return {
          url: merchant?.webhookUrl ?? null,
          secrets: merchant ? await merchants.activeWebhookSecrets(merchantId) : [],
        };
      },
    },
    // With workers on, they build the payloads; with them off, this thread does, from these.
    sender: deliveryWorkers.length > 0 ? new SpreadSender(deliveryWorkers) : undefined,
    payloads: {
      async build(message: MessageForPayload): Promise<unknown> {
        if (message.eventName === PAYMENT_CREDENTIALS) return credentialsPayload.build(message.subjectId);
        if (ORDER_EVENTS.includes(message.eventName)) return orderPayloads.build(message.subjectId);
        throw new Error(`no payload builder for event ${message.eventName}`);
      },
    },
  });
  const webhooks = new Webhooks({ db, dispatcher, now: clock.now });
  const outbox = {
    // The services tell time by this process's clock; messages are kept in the database's.
    newMessage: (message: NewMessage, now: number) =>
      newMessage(message, now + clock.offsetMs, dispatcher.leaseForNew()),
    insertMessages,
  };
  const orders = new Orders({
    db,
    keyRing,
    outbox,
    dispatcher,
  });
  const orderPayloads = new OrderPayloadBuilder(orders);
  const credentials = new CredentialsService({
    db,
    repo: payments,
    idempotency,
    sessions,
    wallet,
    outbox,
    payloads: credentialsPayload,
    dispatcher,
    tokens,
  });
  const externalResponses = new ExternalResponseService({ db, repo: payments, idempotency, keyRing });
  const credentialsLookup = new CredentialsLookup({ payments, webhooks });
  const senders = createSenders({ config, db, log });
  const shopperAuth = new ShopperAuth({
    db,
    keyRing,
    shoppers: wallet,
    sender: senders.sender,
    env: config.env,
    log,
  });
  const gateways = new GatewayAccounts({
    db,
    keyRing,
    env: config.env,
    sandboxGatewayUrl: config.sandboxGatewayUrl,
  });
  const checkout = new Checkout({
    db,
    keyRing,
    log,
    orders,
    merchants,
    wallet,
    sessions,
    vault,
    gateways,
    shopperAuth,
    sessionTtlSeconds: config.sessionTtlSeconds,
  });
  return {
    config,
    log,
    db,
    clock,
    rateLimits: new RateLimits(db, clock.now),
    keyRing,
    merchants,
    wallet,
    sessions,
    vault,
    idempotency,
    payments,
    credentials,
    externalResponses,
    credentialsLookup,
    orders,
    dispatcher,
    deliveryWorkers,
    webhooks,
    senders,
    shopperAuth,
    gateways,
    checkout,
  };
}

export async function createApp(services: Services): Promise<FastifyInstance> {
  const { config } = services;
  const routes = [
    credentialsLookupRoutes(services),
    webhookRoutes(services.webhooks),
    orderGetRoute(services.orders),
    createOrderRoute(services),
    shopperLookupRoute(services),
    checkoutPageRoute({ orders: services.orders, assets: readCheckoutAssets() }),
    checkoutAssetRoutes(),
    ...checkoutApiRoutes(services),
    sdkRoutes({ dir: SDK_PACKAGE_DIR }),
  ];
  if (config.env === 'staging') {
    routes.push(sandboxSessionsRoute({ ...services, sessionTtlSeconds: config.sessionTtlSeconds }));
    if (services.senders.mailbox) routes.push(sandboxMessagesRoute(services.senders.mailbox));
  }
  return buildApp({
    db: services.db,
    log: services.log,
    publicUrl: config.publicUrl,
    bodyLimitBytes: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    merchants: services.merchants,
    idempotency: services.idempotency,
    credentials: services.credentials,
    externalResponses: services.externalResponses,
    routes,
  });
}

export interface RunningService {
  url: string;
  services: Services;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** What stops a server listening, as the rule of the variable that chose its address. */
const LISTEN_ERRORS: Record<string, { variable: 'port' | 'host'; rule: string }> = {
  EADDRINUSE: { variable: 'port', rule: 'is in use: stop what listens there, or choose a free port' },
  EACCES: { variable: 'port', rule: 'needs privileges this process does not have: choose a port above 1023' },
  EADDRNOTAVAIL: { variable: 'host', rule: 'is not an address of this machine' },
};

/**
 * Runs `listen`; a busy, privileged or foreign address stops the start with the one-line configuration
 * error that names the variable to change (`npm start` with port 4000 taken says PORT), not a stack.
 */
async function listenAt<T>(
  variables: { port: string; host: string },
  address: string,
  listen: () => Promise<T>,
): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    const known = LISTEN_ERRORS[(error as NodeJS.ErrnoException).code ?? ''];
    if (known) throw new ConfigError(variables[known.variable], `${address} ${known.rule}`);
    throw error;
  }
}

/** Starts the service: migrations, staging seed data, the HTTP server and the webhook dispatcher. */
export async function startService(
  config: Config,
  log: Logger = createLogger(config.logLevel),
): Promise<RunningService> {
  const services = await createServices(config, log);
  if (config.env === 'staging') await seedStaging(services.wallet);
  const app = await createApp(services);
  let sweep: NodeJS.Timeout | undefined;
  const close = async () => {
    clearInterval(sweep);
    await app.close();
    await services.dispatcher.stop();
    services.clock.stop();
    services.senders.close();
    await services.db.close();
  };
  // An IPv6 address in a URL or beside a port is written in brackets.
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  try {
    await listenAt({ port: 'PORT', host: 'HOST' }, `${host}:${config.port}`, () =>
      app.listen({ port: config.port, host: config.host }),
    );
  } catch (error) {
    await close();
    throw error;
  }
  if (config.webhookDispatch) await services.dispatcher.start();
  sweep = setInterval(() => {
    services.idempotency
      .sweep()
      .catch((error: unknown) => log.warn({ err: error }, 'idempotency sweep failed'));
    services.orders
      .expireDue()
      .catch((error: unknown) => log.warn({ err: error }, 'order expiry sweep failed'));
    services.shopperAuth
      .sweep()
      .catch((error: unknown) => log.warn({ err: error }, 'shopper sign-in sweep failed'));
    services.checkout.sweep().catch((error: unknown) => log.warn({ err: error }, 'enrolment sweep failed'));
    services.rateLimits
      .sweep()
      .catch((error: unknown) => log.warn({ err: error }, 'rate-limit sweep failed'));
  }, SWEEP_INTERVAL_MS);
  sweep.unref();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    url: `http://${host}:${port}`,
    services,
    app,
    close,
  };
}

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
    const created = await merchants.create(settings);
    return { merchantId: created.merchant.id, apiKey: created.apiKey, webhookSecret: created.webhookSecret };
  }
  const { credentialTypes, ...patch } = settings;
  await merchants.update(existing.id, patch);
  if (credentialTypes.join() !== existing.credentialTypes.join()) {
    await merchants.approveCredentials(existing.id, credentialTypes);
  }
  for (const key of await merchants.listApiKeys(existing.id)) {
    if (!key.revokedAt) await merchants.revokeApiKey(key.id);
  }
  const { apiKey } = await merchants.createApiKey(existing.id);
  const [webhookSecret] = await merchants.activeWebhookSecrets(existing.id);
  if (!webhookSecret) throw new Error(`merchant ${existing.id} has no active webhook secret`);
  return { merchantId: existing.id, apiKey, webhookSecret };
}
