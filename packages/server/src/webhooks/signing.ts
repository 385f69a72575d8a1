import { Webhook } from 'standardwebhooks';

export const USER_AGENT = 'WalletCheckout-Webhooks/1';

/** Keys decoded once and reused; past this many distinct secrets the cache starts over. */
const MAX_CACHED_KEYS = 10_000;

export type SignedHeaders = Record<
  'webhook-id' | 'webhook-timestamp' | 'webhook-signature' | 'content-type' | 'user-agent',
  string
>;

/**
 * Signs deliveries per the Standard Webhooks spec with the `standardwebhooks` package, the same code
 * merchants verify with. During a secret rotation every active secret signs, and the signatures are
 * sent space-separated so a receiver holding either secret accepts the message.
 */
export class Signer {
  readonly #keys = new Map<string, Webhook>();

  headers(messageId: string, at: Date, body: string, secrets: readonly string[]): SignedHeaders {
    if (secrets.length === 0) throw new Error('no active webhook secret to sign with');
    const signatures = secrets.map((secret) => this.#key(secret).sign(messageId, at, body));
    return {
      'webhook-id': messageId,
      // Whole seconds, as the spec and the verifier's five-minute tolerance expect.
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatures.join(' '),
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
    };
  }

  #key(secret: string): Webhook {
    let key = this.#keys.get(secret);
    if (key === undefined) {
      if (this.#keys.size >= MAX_CACHED_KEYS) this.#keys.clear();
      key = new Webhook(secret);
      this.#keys.set(secret, key);
    }
    return key;
  }
}
