/**
 * The composition root: builds every part of the service from the configuration, wires them together
 * and runs them. Nothing else constructs long-lived objects.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { checkoutAssetRoutes, readCheckoutAssets } from './api/checkout/assets.js';
import { forgetDevicesRoutes } from './api/checkout/forget-devices.js';
import { createOrderRoute } from './api/checkout/orders.create.js';
import { checkoutPageRoute } from './api/checkout/page.js';
import { checkoutApiRoutes } from './api/checkout/shopper-routes.js';
import { shopperLookupRoute } from './api/checkout/shoppers.lookup.js';
import { accountRoutes } from './api/merchant/account.js';
import { auditEventsRoute } from './api/merchant/audit-events.get.js';
import { credentialsLookupRoutes } from './api/merchant/credentials-requests.get.js';
import { orderGetRoute } from './api/merchant/orders.get.js';
import { webhookRoutes } from './api/merchant/webhooks.js';
import { InFlight } from './api/plugins/in-flight.js';
import { sandboxMessagesRoute } from './api/sandbox/messages.js';
import { sandboxSessionsRoute } from './api/sandbox/sessions.js';
import { SDK_PACKAGE_DIR, sdkRoutes } from './api/sdk.js';
import { buildApp } from './app.js';
import { AuditTrail } from './audit/index.js';
import { Checkout } from './checkout/index.js';
import { type Config, ConfigError, reachWarnings } from './config.js';
import { DbClock } from './db/clock.js';
import { durabilityWarnings } from './db/durability.js';
import { createDb, type Db } from './db/index.js';
import { migrate } from './db/migrate.js';
import { transportWarnings } from './db/transport.js';
import { type ErrorLogger, FailureLog } from './failure-log.js';
import { GatewayAccounts } from './gateways/index.js';
import { HttpDrain } from './http-drain.js';
import { IdempotencyStore } from './idempotency/store.js';
import { createLogger, type Logger } from './log.js';
import { startMaintenance } from './maintenance.js';
import { Merchants } from './merchants/index.js';
import { Metrics, serveMetrics } from './metrics.js';
import { ORDER_EVENTS, OrderPayloadBuilder, Orders } from './orders/index.js';
import { CredentialsService, PAYMENT_CREDENTIALS } from './payments/credentials.js';
import { ExternalResponseService } from './payments/external-response.js';
import { CredentialsLookup } from './payments/lookup.js';
import { CredentialsPayloadBuilder } from './payments/payload.js';
import { PaymentsRepo } from './payments/repo.js';
import { RateLimits } from './rate-limits.js';
import { Retention } from './retention.js';
import { seedStaging } from './sandbox/seed.js';
import { createSenders, type Senders, ShopperAuth } from './shopper-auth/index.js';
import { type KeyRing, loadKeyRing } from './vault/keyring.js';
import { lackingKeys } from './vault/rotate.js';
import { SandboxTokenService } from './vault/sandbox-token-service.js';
import { CardVault } from './vault/vault.js';
import { Sessions, Wallet } from './wallet/index.js';
import {
  CONNECTIONS_PER_ORIGIN,
  configuredDestinations,
  Dispatcher,
  insertMessages,
  type MessageForPayload,
  type NewMessage,
  newMessage,
  SpreadSender,
  Webhooks,
  WebhookTester,
  WorkerSender,
} from './webhooks/index.js';

/** How often the SQLite WAL is copied back into the database file, off the event loop. */
const WAL_CHECKPOINT_INTERVAL_MS = 100;

/**
 * Logs the failures of the WAL checkpoint, which is tried every WAL_CHECKPOINT_INTERVAL_MS: while it
 * fails (a full disk, a disk I/O error) each kind of failure once per 10 s with a count, not ten lines a
 * second filling the log on a disk that is already full. `flush` logs the counts still open, at a stop.
 */
export function checkpointFailureLogger(log: ErrorLogger): { failed(error: Error): void; flush(): void } {
  const failures = new FailureLog(log);
  return {
    failed: (error) => failures.failed(error, 'the WAL checkpoint failed; it is retried'),
    flush: () => failures.flush(),
  };
}

export interface Services {
  config: Config;
  log: Logger;
  db: Db;
  /** The WAL checkpoint's failures, counted between their log lines (SQLite). */
  checkpointFailures: { flush(): void };
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
  /** `POST /webhooks/test`: one test webhook sent now, its answer reported. */
  webhookTester: WebhookTester;
  senders: Senders;
  shopperAuth: ShopperAuth;
  gateways: GatewayAccounts;
  checkout: Checkout;
  /** Collected only when they are served (METRICS_PORT). */
  metrics: Metrics | undefined;
  /**
   * Deletes settled webhook messages and what hangs on them, and abandoned orders, after RETENTION_DAYS
   * (never when `off`); erases the card numbers of removed cards once due.
   */
  retention: Retention;
  audit: AuditTrail;
}

export async function createServices(config: Config, log: Logger): Promise<Services> {
  const checkpointFailures = checkpointFailureLogger(log);
  const db = createDb(config.databaseUrl, {
    onIdleError: (error) =>
      log.warn({ err: error }, 'an idle database connection failed; it will be replaced'),
    backgroundCheckpoints: {
      intervalMs: WAL_CHECKPOINT_INTERVAL_MS,
      onError: (error) => checkpointFailures.failed(error),
    },
  });
  await migrate(db, (warning) => log.warn(warning));
  for (const warning of await durabilityWarnings(db)) log.warn(warning);
  const keyRing = loadKeyRing({
    vaultKeys: config.vaultKeys,
    dataDir: config.dataDir,
    warn: (message) => log.warn(message),
    warnEachLoad: true,
  });
  await checkKeyRing(db, keyRing, config, log);
  const clock = new DbClock(db);
  await clock.start((error) =>
    log.warn({ err: error }, "could not read the database's clock; keeping the last offset"),
  );
  const destinations = configuredDestinations(config);
  for (const warning of reachWarnings(config)) log.warn(warning);
  const merchants = new Merchants({ db, keyRing, env: config.env, webhookDestinations: destinations });
  if (config.env === 'production') {
    for (const warning of await transportWarnings(db)) log.warn(warning);
    for (const warning of await merchants.productionWarnings()) log.warn(warning);
  }
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
          allowedNetworks: config.webhookAllowedNetworks,
          loopback: config.webhookLoopback,
          timeoutMs: config.webhookTimeoutMs,
          connectionsPerOrigin: Math.floor(CONNECTIONS_PER_ORIGIN / config.webhookWorkers),
        },
        remembered: (message) =>
          message.eventName === PAYMENT_CREDENTIALS ? credentialsPayload.take(message.subjectId) : undefined,
        networkTokens: { provision: (card) => tokens.networkToken(card) },
      }),
  );
  const metrics = config.metrics ? new Metrics() : undefined;
  // Where each merchant's webhooks go, and the secrets that sign them.
  const endpoints = {
    async resolve(merchantId: string) {
      const merchant = await merchants.get(merchantId);
      return {
        url: merchant?.webhookUrl ?? null,
        secrets: merchant ? await merchants.activeWebhookSecrets(merchantId) : [],
      };
    },
  };
  const rateLimits = new RateLimits(db, clock.now);
  const webhookTester = new WebhookTester({
    destinations,
    timeoutMs: config.webhookTimeoutMs,
    endpoints,
    limits: rateLimits,
  });
  const dispatcher = new Dispatcher({
    db,
    log,
    metrics,
    destinations,
    timeoutMs: config.webhookTimeoutMs,
    retryDelaysMs: { default: config.webhookRetryDelaysMs, credentials: config.credentialsRetryDelaysMs },
    leaseMs: config.webhookLeaseMs,
    now: clock.now,
    endpoints,
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
  if (metrics) {
    metrics.gauge(
      'wallet_webhook_deliveries_in_flight',
      'Webhook attempts this process is making now.',
      () => dispatcher.load().inFlight,
      log,
    );
    metrics.gauge(
      'wallet_webhook_messages_held',
      'Webhook messages this process holds: in flight, waiting for a delivery slot, or with results not yet written.',
      () => dispatcher.load().held,
      log,
    );
    metrics.gauge(
      'wallet_webhook_longest_due_wait_seconds',
      "How long the outbox's first due webhook message has waited (0 when none is due); the same in every process, as the outbox is shared.",
      async () => (await webhooks.longestDueWaitMs()) / 1000,
      log,
    );
  }
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
    limits: rateLimits,
    rememberDeviceDays: config.rememberDeviceDays,
    publicUrl: config.publicUrl,
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
    limits: rateLimits,
    sessionTtlSeconds: config.sessionTtlSeconds,
  });
  return {
    config,
    log,
    db,
    checkpointFailures,
    clock,
    rateLimits,
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
    webhookTester,
    senders,
    shopperAuth,
    gateways,
    checkout,
    metrics,
    retention: new Retention({ db, days: config.retentionDays, webhooks, payments, now: clock.now }),
    audit: new AuditTrail(db),
  };
}

export async function createApp(services: Services, inFlight?: InFlight): Promise<FastifyInstance> {
  const { config } = services;
  const routes = [
    credentialsLookupRoutes(services),
    webhookRoutes({
      webhooks: services.webhooks,
      tester: services.webhookTester,
      merchants: services.merchants,
    }),
    orderGetRoute(services.orders),
    auditEventsRoute(services),
    accountRoutes(services),
    createOrderRoute(services),
    shopperLookupRoute(services),
    checkoutPageRoute({
      orders: services.orders,
      merchants: services.merchants,
      assets: readCheckoutAssets(),
    }),
    forgetDevicesRoutes(services),
    checkoutAssetRoutes(),
    ...checkoutApiRoutes(services),
    sdkRoutes({ dir: SDK_PACKAGE_DIR, publicUrl: config.publicUrl }),
  ];
  if (config.env === 'staging') {
    // Staging that sends real mail may hold real shoppers: the shortcuts then serve test addresses only.
    const testAddressesOnly = config.smtpUrl !== undefined;
    routes.push(
      sandboxSessionsRoute({ ...services, sessionTtlSeconds: config.sessionTtlSeconds, testAddressesOnly }),
    );
    if (services.senders.mailbox) {
      routes.push(sandboxMessagesRoute(services.senders.mailbox, { testAddressesOnly }));
    }
  }
  return buildApp({
    db: services.db,
    log: services.log,
    publicUrl: config.publicUrl,
    bodyLimitBytes: config.bodyLimitBytes,
    requestTimeoutMs: config.requestTimeoutMs,
    trustProxy: config.trustProxy,
    merchants: services.merchants,
    idempotency: services.idempotency,
    credentials: services.credentials,
    externalResponses: services.externalResponses,
    metrics: services.metrics,
    inFlight,
    routes,
  });
}

export interface RunningService {
  url: string;
  /** Where Prometheus scrapes `GET /metrics`, when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  services: Services;
  app: FastifyInstance;
  /** The requests being handled, which a stop waits for before it closes the database. */
  inFlight: InFlight;
  close(): Promise<void>;
}

/** What stops a server listening, as the rule of the variable that chose its address. */
const LISTEN_ERRORS: Record<string, { variable: 'port' | 'host'; rule: string }> = {
  EADDRINUSE: { variable: 'port', rule: 'is in use: stop what listens there, or choose a free port' },
  EACCES: { variable: 'port', rule: 'needs privileges this process does not have: choose a port above 1023' },
  EADDRNOTAVAIL: { variable: 'host', rule: 'is not an address of this machine' },
  ENOTFOUND: {
    variable: 'host',
    rule: 'names no address: give an IP address or a name this machine resolves',
  },
};

/**
 * Runs `listen`; a busy, privileged or foreign address stops the start with the one-line configuration
 * error that names the variable to change (`npm start` with port 4000 taken says PORT), not a stack.
 */
export async function listenAt<T>(
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

/**
 * Stops a production start whose key ring lacks a key stored values are sealed under (every read of
 * them would fail: a card at checkout, a webhook secret at delivery), and warns in staging. The check
 * reads a sample of each column (keyIdsInUse).
 */
async function checkKeyRing(db: Db, keyRing: KeyRing, config: Config, log: Logger): Promise<void> {
  const problem = await lackingKeys(db, keyRing);
  if (problem === undefined) return;
  if (config.env === 'production') {
    await db.close();
    throw new ConfigError('VAULT_KEYS', problem);
  }
  log.warn(`the vault key ring (${config.vaultKeys ? 'VAULT_KEYS' : 'the staging key file'}) ${problem}`);
}

/** A host as written in a URL or beside a port: an IPv6 address in brackets. */
export function inUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Starts the service: migrations, staging seed data, the HTTP server, the webhook dispatcher and the
 * e-mails to shoppers.
 */
export async function startService(
  config: Config,
  log: Logger = createLogger(config.logLevel),
): Promise<RunningService> {
  const services = await createServices(config, log);
  if (config.env === 'staging') await seedStaging(services.db, services.wallet);
  const inFlight = new InFlight();
  const app = await createApp(services, inFlight);
  const drain = new HttpDrain(app.server);
  let maintenance: { stop(): Promise<void> } | undefined;
  let metricsServer: Server | undefined;
  /** `started` false: the listen failed, and nothing stopped that a log line need account for. */
  const close = async (started = true) => {
    const began = performance.now();
    if (metricsServer) await closeServer(metricsServer);
    // The longest the service itself waits on anyone (a receiver's answer to POST /webhooks/test, a
    // webhook attempt), and what docs/operations.md and the systemd unit promise a stop waits for.
    const requests = await drain.stop(() => app.close(), config.webhookTimeoutMs);
    await maintenance?.stop();
    await services.webhookTester.close();
    // Requests cut at the end of the grace period run on meanwhile, up to as long again.
    if (inFlight.count > 0) {
      log.info(
        { requests: inFlight.count },
        'waiting for the work of requests cut at the end of the grace period',
      );
    }
    const [webhooks, requestsStillRunning] = await Promise.all([
      services.dispatcher.stop(),
      inFlight.settled(config.webhookTimeoutMs),
    ]);
    if (requestsStillRunning > 0) {
      log.warn(
        { requestsStillRunning },
        'requests still under way when the database closed; a payment among them is settled by the sweep for payments left under way',
      );
    }
    await services.shopperAuth.notices.stop();
    services.clock.stop();
    services.senders.close();
    await services.db.close();
    services.checkpointFailures.flush();
    if (!started) return;
    log.info(
      {
        ...requests,
        requestsStillRunning,
        webhooksHandedBack: webhooks.handedBack,
        webhookAttemptsFinished: webhooks.attemptsFinished,
        durationMs: Math.round(performance.now() - began),
      },
      'wallet checkout stopped',
    );
  };
  const host = inUrl(config.host);
  let metricsUrl: string | undefined;
  try {
    // Delivery first: when the port answers (and /healthz with it), a webhook is sent without waiting for
    // the delivery thread to load.
    if (config.webhookDispatch) await services.dispatcher.start();
    // The API's port last: a metrics port that cannot be had then stops the start before a client's
    // request is taken, rather than cutting it.
    if (services.metrics && config.metrics) {
      const { metrics } = services;
      const at = config.metrics;
      const variables = { port: 'METRICS_PORT', host: 'METRICS_HOST' };
      metricsServer = await listenAt(variables, `${inUrl(at.host)}:${at.port}`, () =>
        serveMetrics(metrics, log, at),
      );
      metricsUrl = `http://${inUrl(at.host)}:${(metricsServer.address() as AddressInfo).port}/metrics`;
    }
    await listenAt({ port: 'PORT', host: 'HOST' }, `${host}:${config.port}`, () =>
      app.listen({ port: config.port, host: config.host }),
    );
  } catch (error) {
    await close(false);
    throw error;
  }
  maintenance = startMaintenance(services, log);
  services.shopperAuth.notices.start();
  void services.senders.checkSmtp();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    url: `http://${host}:${port}`,
    metricsUrl,
    services,
    app,
    inFlight,
    close: () => close(),
  };
}
