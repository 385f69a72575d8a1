import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './types.js';

/** Request headers as Node's `http` module, Fastify or Express give them, or a fetch `Headers`. */
export type IncomingHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookInput {
  /** The merchant account's `whsec_…` secret. */
  secret: string;
  /** The request body exactly as received, before any JSON parsing: the signature covers these bytes. */
  body: string | Buffer;
  headers: IncomingHeaders;
}

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * Checks a webhook's Standard Webhooks signature (any of the space-separated signatures made with
 * `secret`) and that its timestamp is within five minutes, then returns the parsed event. Throws
 * WebhookVerificationError otherwise: answer such a request 400 and do not act on it. Delivery is at
 * least once: the same event may come again with the same `webhook-id` (`webhookId(headers)`), so drop
 * the ones already handled.
 */
export function verifyWebhook({ secret, body, headers }: VerifyWebhookInput): WebhookEvent {
  const signed: Record<string, string> = {};
  for (const name of SIGNED_HEADERS) {
    const value = header(headers, name);
    if (value === undefined) throw new WebhookVerificationError(`The ${name} header is missing.`);
    signed[name] = value;
  }
  let verifier: Webhook;
  try {
    verifier = new Webhook(secret);
  } catch {
    throw new TypeError(
      'secret must be the webhook secret of the merchant account, whsec_ followed by base64.',
    );
  }
  try {
    return verifier.verify(body, signed) as WebhookEvent;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new WebhookVerificationError(`The webhook does not verify: ${reason}.`);
  }
}

/** The `webhook-id` of a request: the same on every attempt of one message. */
export function webhookId(headers: IncomingHeaders): string | undefined {
  return header(headers, 'webhook-id');
}

/** A header by its lowercase name, whatever the case of the names in a plain object. */
function header(headers: IncomingHeaders, name: string): string | undefined {
  const value =
    headers instanceof Headers
      ? headers.get(name)
      : (headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]);
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === null || text === '' ? undefined : text;
}
