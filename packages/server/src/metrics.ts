/**
 * The process's metrics in Prometheus' text format, served on their own listener (`METRICS_PORT`), never
 * on the public API's: request counts and latencies by route, webhook attempts by outcome, the delivery
 * work this process holds, how long the outbox's oldest due message has waited, and Node's own figures
 * (CPU, memory, event-loop delay, garbage collection).
 */
import http from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from './log.js';

/** What became of one webhook attempt: delivered, failed with retries left, or failed for good. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

/** The route label of a request that matched none: paths a client made up would each be a new series. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Seconds. A durable acknowledgement takes 1 to 10 ms under load (docs/benchmarks.md); the top buckets
 * catch a payment waiting on its gateway.
 */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds, up to the 15 s a receiver is given by default and the 120 s WEBHOOK_TIMEOUT_MS allows. */
const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120];

/**
 * A sample line whose value prom-client 15 wrote as `Nan`: the text format spells it `NaN`, and strict
 * parsers (OpenMetrics) refuse any other spelling.
 */
const MISSPELLED_NAN = /^([^#].*) Nan$/gm;

export class Metrics {
  readonly #registry = new Registry();
  readonly #requests = new Counter({
    name: 'wallet_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.#registry],
  });
  readonly #requestSeconds = new Histogram({
    name: 'wallet_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method and route template.',
    labelNames: ['method', 'route'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.#registry],
  });
  readonly #attempts = new Counter({
    name: 'wallet_webhook_attempts_total',
    help: 'Webhook delivery attempts made by this process, by event and outcome (delivered, retrying, failed).',
    labelNames: ['event', 'outcome'] as const,
    registers: [this.#registry],
  });
  readonly #attemptSeconds = new Histogram({
    name: 'wallet_webhook_attempt_duration_seconds',
    help: 'Time a receiver took to answer a webhook attempt (to its time-out when it did not), by event.',
    labelNames: ['event'] as const,
    buckets: ATTEMPT_BUCKETS,
    registers: [this.#registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.#registry });
  }

  /** The `content-type` of what `text` returns. */
  get contentType(): string {
    return this.#registry.contentType;
  }

  /** Every metric in Prometheus' text format, collected now; values read `NaN`, `+Inf` or `-Inf` when not finite. */
  async text(): Promise<string> {
    return (await this.#registry.metrics()).replace(MISSPELLED_NAN, '$1 NaN');
  }

  /** One answered request; `route` is the route's template (`/payments/credentials/:requestId`). */
  request(method: string, route: string, statusCode: number, seconds: number): void {
    this.#requests.inc({ method, route, status_code: statusCode });
    this.#requestSeconds.observe({ method, route }, seconds);
  }

  /** One webhook attempt of an `event` message, and what became of the message. */
  attempt(event: string, outcome: DeliveryOutcome, seconds: number): void {
    this.#attempts.inc({ event, outcome });
    this.#attemptSeconds.observe({ event }, seconds);
  }

  /**
   * A gauge read when the metrics are scraped. `read` may ask the database; when it fails, the gauge
   * reads NaN in that scrape (not a stale or zero figure that would pass for good news) and the failure
   * is logged.
   */
  gauge(name: string, help: string, read: () => number | Promise<number>, log: Logger): void {
    new Gauge({
      name,
      help,
      registers: [this.#registry],
      async collect() {
        try {
          this.set(await read());
        } catch (error) {
          this.set(Number.NaN);
          log.warn({ err: error, metric: name }, 'could not read a metric; it reads NaN in this scrape');
        }
      },
    });
  }
}

/**
 * Serves `GET /metrics` on `host:port`; every other path is a 404 and every other method a 405, in the
 * API's error shape. Resolves with the server once it listens.
 */
export async function serveMetrics(
  metrics: Metrics,
  log: Logger,
  address: { host: string; port: number },
): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      answerError(
        response,
        404,
        'NOT_FOUND',
        `No route ${request.method} ${path}; metrics are at GET /metrics.`,
      );
    } else if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      answerError(
        response,
        405,
        'METHOD_NOT_ALLOWED',
        `/metrics does not take ${request.method}; it takes GET, HEAD.`,
      );
    } else {
      metrics.text().then(
        (text) => {
          response.writeHead(200, { 'content-type': metrics.contentType });
          response.end(request.method === 'HEAD' ? undefined : text);
        },
        (error: unknown) => {
          log.error({ err: error }, 'could not collect the metrics');
          answerError(response, 500, 'INTERNAL_ERROR', 'The metrics could not be collected; see the log.');
        },
      );
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

function answerError(response: http.ServerResponse, status: number, errorCode: string, errorMessage: string) {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ errorCode, errorMessage }));
}
