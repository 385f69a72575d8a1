/**
 * Receiving Wallet Checkout's webhooks: verify the Standard Webhooks signature on the raw body before
 * anything else, drop repeats by `webhook-id` (delivery is at least once), answer 2xx fast.
 */
import {
  type PaymentCredentialsEvent,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
  webhookId,
} from '@wallet-checkout/node';
import type { FastifyPluginAsync } from 'fastify';

export interface WebhookReceiverOptions {
  path: string;
  /** The merchant account's `whsec_…` secret. */
  secret: string;
  /** Called once per verified event (repeats of a `webhook-id` are dropped). */
  handle(event: WebhookEvent): void;
}

/** How many delivered `webhook-id`s to remember for dropping repeats; a real shop keeps them in its database. */
const REMEMBERED_IDS = 10_000;

export function webhookReceiver(options: WebhookReceiverOptions): FastifyPluginAsync {
  const seen = new Set<string>();
  return async (app) => {
    // The signature covers the exact bytes sent, so this route reads the body as text, unparsed.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    app.post(options.path, async (request, reply) => {
      let event: WebhookEvent;
      try {
        // Throws on a missing or wrong signature and on a timestamp more than 5 minutes off (replays).
        event = verifyWebhook({
          secret: options.secret,
          body: String(request.body ?? ''),
          headers: request.headers,
        });
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        return reply.code(401).send({ error: 'invalid webhook signature' });
      }
      const id = webhookId(request.headers) as string;
      if (!seen.has(id)) {
        seen.add(id);
        if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value as string);
        options.handle(event);
      }
      return reply.code(204).send();
    });
  };
}

/**
 * Hands PAYMENT_CREDENTIALS webhooks to the request that waits for them, by `merchantReference`. The
 * wait is registered before credentials are requested: the webhook may arrive before the API answers.
 */
export class CredentialsInbox {
  readonly #waiting = new Map<string, (event: PaymentCredentialsEvent) => void>();

  expect(
    reference: string,
    timeoutMs: number,
  ): { received: Promise<PaymentCredentialsEvent>; cancel(): void } {
    let timer: NodeJS.Timeout | undefined;
    const received = new Promise<PaymentCredentialsEvent>((resolve, reject) => {
      timer = setTimeout(() => {
        this.#waiting.delete(reference);
        reject(new Error(`no PAYMENT_CREDENTIALS webhook for ${reference} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiting.set(reference, (event) => {
        clearTimeout(timer);
        this.#waiting.delete(reference);
        resolve(event);
      });
    });
    return {
      received,
      cancel: () => {
        clearTimeout(timer);
        this.#waiting.delete(reference);
      },
    };
  }

  /** False when nobody waits (a late repeat, or a request this process did not make): it is dropped. */
  deliver(event: PaymentCredentialsEvent): boolean {
    const waiter = this.#waiting.get(event.merchantReference);
    waiter?.(event);
    return waiter !== undefined;
  }
}
