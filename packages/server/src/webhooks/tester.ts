/**
 * `POST /webhooks/test`: one signed `WEBHOOK_TEST` webhook sent to the merchant's endpoint now, and its
 * answer reported back, so that a merchant can check its receiver and its signature check before the
 * first payment, in production too (where there is no sandbox session to ask credentials for). Nothing is
 * stored and nothing is retried: the answer is the report.
 */
import { newId } from '../ids.js';
import type { RateLimits } from '../rate-limits.js';
import { type AttemptOutcome, Sender, type WebhookEndpoint } from './sender.js';
import type { WebhookDestinations } from './url-guard.js';

export const WEBHOOK_TEST = 'WEBHOOK_TEST';

/**
 * 10 a minute per merchant: a developer clicking through a set-up never needs more, and each test may
 * hold a connection to the receiver for the whole time-out.
 */
export const TESTS_PER_MINUTE = 10;

export interface WebhookTestResult extends AttemptOutcome {
  /** The `webhook-id` it was sent with (`tst_…`: not a message of the outbox). */
  webhookId: string;
  /** The URL it was sent to; null when the merchant has none. */
  url: string | null;
  delivered: boolean;
}

export interface WebhookTesterOptions {
  destinations: WebhookDestinations;
  timeoutMs: number;
  endpoints: { resolve(merchantId: string): Promise<WebhookEndpoint> };
  limits: Pick<RateLimits, 'enforce'>;
  now?: () => number;
}

export class WebhookTester {
  readonly #endpoints: WebhookTesterOptions['endpoints'];
  readonly #limits: WebhookTesterOptions['limits'];
  readonly #now: () => number;
  readonly #sender: Sender;

  constructor(options: WebhookTesterOptions) {
    this.#endpoints = options.endpoints;
    this.#limits = options.limits;
    this.#now = options.now ?? Date.now;
    const now = this.#now;
    // The same Sender as deliveries use (URL rules on the address dialled, signature, time-out,
    // redirects refused), its own connections, and a body of its own.
    this.#sender = new Sender({
      destinations: options.destinations,
      timeoutMs: options.timeoutMs,
      connectionsPerOrigin: 1,
      payloads: {
        build: async (message) => ({
          eventName: WEBHOOK_TEST,
          merchantId: message.merchantId,
          sentAt: new Date(now()).toISOString(),
        }),
      },
    });
  }

  /** @throws RateLimitedError past TESTS_PER_MINUTE for the merchant. */
  async send(merchantId: string): Promise<WebhookTestResult> {
    await this.#limits.enforce(
      `webhook-test:${merchantId}`,
      TESTS_PER_MINUTE,
      60_000,
      (wait) =>
        `At most ${TESTS_PER_MINUTE} test webhooks a minute; retry in ${wait} ${wait === 1 ? 'second' : 'seconds'}.`,
    );
    const endpoint = this.#endpoints.resolve(merchantId);
    const webhookId = newId('webhookTest');
    const outcome = await this.#sender.attempt(
      { id: webhookId, merchantId, eventName: WEBHOOK_TEST, subjectId: merchantId },
      endpoint,
      this.#now(),
    );
    const { url } = await endpoint.catch(() => ({ url: null }));
    return { webhookId, url, delivered: outcome.error === null, ...outcome };
  }

  close(): Promise<void> {
    return this.#sender.close();
  }
}
