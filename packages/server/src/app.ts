import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { docsPlugin } from './api/docs.js';
import { healthRoute } from './api/health.js';
import { credentialsRoute } from './api/merchant/payments.credentials.js';
import { externalResponseRoute } from './api/merchant/payments.external-response.js';
import { type Authenticator, authPlugin } from './api/plugins/auth.js';
import { clientError, errorsPlugin, frameworkError } from './api/plugins/errors.js';
import { idempotencyPlugin } from './api/plugins/idempotency.js';
import { type InFlight, inFlightBegins, inFlightEnds } from './api/plugins/in-flight.js';
import { inputPlugin } from './api/plugins/input.js';
import { metricsPlugin } from './api/plugins/metrics.js';
import { newRequestId, requestIdPlugin } from './api/plugins/request-id.js';
import { validatorCompiler } from './api/validation.js';
import { REQUEST_TIMEOUT_MS } from './config.js';
import type { Db } from './db/index.js';
import type { IdempotencyStore } from './idempotency/store.js';
import { LazyChildLogger, type Logger } from './log.js';
import type { Metrics } from './metrics.js';
import type { CredentialsService } from './payments/credentials.js';
import type { ExternalResponseService } from './payments/external-response.js';

export const VERSION = '0.1.0';

export interface AppDeps {
  db: Db;
  log: Logger;
  publicUrl: string;
  bodyLimitBytes: number;
  /** How long a client has to send a whole request (`Config.requestTimeoutMs`). */
  requestTimeoutMs?: number;
  /** Which proxies may name the client in `X-Forwarded-For` (`Config.trustProxy`); none by default. */
  trustProxy?: boolean | number | string[];
  merchants: Authenticator;
  idempotency: IdempotencyStore;
  credentials: CredentialsService;
  externalResponses: ExternalResponseService;
  /** Counts requests when given (METRICS_PORT). */
  metrics?: Metrics;
  /** Told of the requests being handled, when given: the service's stop waits for them. */
  inFlight?: InFlight;
  /** Extra route plugins (lookups, sandbox), registered after the core ones. */
  routes?: FastifyPluginAsyncTypebox[];
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const requestTimeoutMs = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    genReqId: newRequestId,
    // Per-request log lines would cost more than the request itself on the credentials path; failures
    // are logged where they happen, with the request id.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, options) =>
      new LazyChildLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger,
    bodyLimit: deps.bodyLimitBytes,
    requestTimeout: requestTimeoutMs,
    trustProxy:
      typeof deps.trustProxy === 'number'
        ? (_address: string, hop: number) => hop < (deps.trustProxy as number)
        : (deps.trustProxy ?? false),
    // A request that comes on an open connection while the service stops is answered, with
    // `Connection: close` (see http-drain.ts), rather than refused with 503: the process can still serve
    // it within its grace period, and a load balancer would pass the 503 on to the client.
    return503OnClosing: false,
    // A request without `Host` is refused by the input rules with the error body (input.ts), where
    // Node would answer a bare 400.
    // Node looks for requests past their time this often: a tenth of the limit, so one is answered at
    // most 10 % late (Node's default, 30 s, could double a 30 s limit).
    http: {
      requireHostHeader: false,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.ceil(requestTimeoutMs / 10),
    },
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);

  if (deps.inFlight) await app.register(inFlightBegins, { inFlight: deps.inFlight });
  if (deps.metrics) await app.register(metricsPlugin, { metrics: deps.metrics });
  await app.register(errorsPlugin);
  // Before the input rules: an answer refusing the URL carries the request id and headers too.
  await app.register(requestIdPlugin);
  await app.register(inputPlugin);
  await app.register(docsPlugin, { publicUrl: deps.publicUrl, version: VERSION });
  await app.register(authPlugin, { merchants: deps.merchants });
  await app.register(idempotencyPlugin, { store: deps.idempotency });
  if (deps.inFlight) await app.register(inFlightEnds, { inFlight: deps.inFlight });

  await app.register(healthRoute(deps.db));
  await app.register(credentialsRoute(deps.credentials));
  await app.register(externalResponseRoute(deps.externalResponses));
  for (const routes of deps.routes ?? []) await app.register(routes);
  return app;
}
