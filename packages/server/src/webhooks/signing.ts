import { createHmac } from 'node:crypto';

export const USER_AGENT = 'WalletCheckout-Webhooks/1';

/** Keys decoded once and reused; past this many distinct secrets the cache starts over. */
const MAX_CACHED_KEYS = 10_000;
const SECRET_PREFIX = 'whsec_';

export type SignedHeaders = Record<
  'webhook-id' | 'webhook-timestamp' | 'webhook-signature' | 'content-type' | 'user-agent',
  string
>;

/**
 * Signs deliveries per the Standard Webhooks spec: `v1,` and the base64 HMAC-SHA256 of
 * `id.timestamp.body` under the secret's bytes. The HMAC is node's own: the `standardwebhooks` package
 * signs in pure JavaScript, about 6 µs per KiB of body; its verifier, which merchants use, checks these
 * signatures in the tests. During a secret rotation every active secret signs, and the signatures are
 * sent space-separated so a receiver holding either secret accepts the message.
 */
export class Signer {
  readonly #keys = new Map<string, Buffer>();

  headers(messageId: string, at: Date, body: string, secrets: readonly string[]): SignedHeaders {
    if (secrets.length === 0) throw new Error('no active webhook secret to sign with');
    // Whole seconds, as the spec and the verifier's five-minute tolerance expect.
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const signed = `${messageId}.${timestamp}.${body}`;
    const signatures = secrets.map(
      (secret) => `v1,${createHmac('sha256', this.#key(secret)).update(signed).digest('base64')}`,
    );
    return {
      'webhook-id': messageId,
      'webhook-timestamp': timestamp,
      'webhook-signature': signatures.join(' '),
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
    };
  }

  #key(secret: string): Buffer {
    let key = this.#keys.get(secret);
    if (key === undefined) {
      key = Buffer.from(
        secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
        'base64',
      );
      if (key.length === 0) throw new Error('a webhook secret must not be empty');
      if (this.#keys.size >= MAX_CACHED_KEYS) this.#keys.clear();
      this.#keys.set(secret, key);
    }
    return key;
  }
}
