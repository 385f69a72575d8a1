/**
 * Webhook signing secrets, in the Standard Webhooks format: `whsec_` + base64 of 24 random bytes, which the
 * `standardwebhooks` package accepts as is. At rest a secret is a key-ring envelope whose associated data
 * is the merchant id (the vault's key rotation relies on that convention to re-encrypt them).
 *
 * A merchant has one current secret (no expiry). Rotation gives the current one an expiry `overlap` away
 * and adds a new current one; until the expiry, deliveries carry a signature per secret, so the merchant
 * can switch its verifier at leisure. The active list is read on every delivery, so it is kept in memory
 * for a few seconds: a rotation in this process shows at once, in another within that time.
 */
import { randomBytes } from 'node:crypto';
import { type Actor, recordAudit } from '../audit/index.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import type { KeyRing } from '../vault/keyring.js';
import { TtlCache } from './cache.js';
import type { MerchantsRepo } from './repo.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** 24 bytes = 192 bits; Standard Webhooks asks for 24 to 64. */
const SECRET_BYTES = 24;
/** 24 h: long enough for a merchant to deploy its verifier with the new secret. */
export const DEFAULT_OVERLAP_SECONDS = 24 * 3600;
/** 30 days: the longest the old secret signs beside the new one. */
export const MAX_OVERLAP_SECONDS = 30 * 24 * 3600;

export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

interface ActiveSecret {
  secret: string;
  /** Null for the current secret. */
  expiresAt: number | null;
}

export class WebhookSecrets {
  readonly #repo: MerchantsRepo;
  readonly #keyRing: KeyRing;
  readonly #now: () => number;
  readonly #cache: TtlCache<string, ActiveSecret[]>;

  constructor(options: {
    repo: MerchantsRepo;
    keyRing: KeyRing;
    now: () => number;
    cacheTtlMs: number;
    cacheMaxEntries: number;
  }) {
    this.#repo = options.repo;
    this.#keyRing = options.keyRing;
    this.#now = options.now;
    this.#cache = new TtlCache({
      ttlMs: options.cacheTtlMs,
      maxEntries: options.cacheMaxEntries,
      now: options.now,
    });
  }

  /** Adds a new current secret with `repo` (which may be bound to the caller's transaction). */
  async issue(repo: MerchantsRepo, merchantId: string): Promise<string> {
    const secret = newWebhookSecret();
    await repo.insertWebhookSecret({
      id: newId('webhookSecret'),
      merchant_id: merchantId,
      secret_ciphertext: this.#keyRing.seal(secret, 'webhook_secrets.secret_ciphertext', merchantId),
      created_at: this.#now(),
      expires_at: null,
    });
    return secret;
  }

  /**
   * Replaces the current secret and returns the new one (shown once). Older secrets keep signing for
   * `overlapSeconds` (never longer than they already would); 0 stops them at once, e.g. after a leak.
   */
  async rotate(merchantId: string, by: Actor, options: { overlapSeconds?: number } = {}): Promise<string> {
    const overlapSeconds = options.overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_OVERLAP_SECONDS) {
      throw new ValidationError(
        `overlapSeconds must be a whole number of seconds from 0 to ${MAX_OVERLAP_SECONDS}, got ${overlapSeconds}`,
      );
    }
    const secret = await this.#repo.transaction(async (repo, trx) => {
      if (!(await repo.lockMerchant(merchantId))) {
        throw new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${merchantId} does not exist`);
      }
      const now = this.#now();
      await repo.deleteExpiredWebhookSecrets(merchantId, now);
      await repo.expireWebhookSecrets(merchantId, now + overlapSeconds * 1000);
      const issued = await this.issue(repo, merchantId);
      await recordAudit(
        trx,
        { actor: by, action: 'webhook_secret.rotated', merchantId, details: { overlapSeconds } },
        now,
      );
      return issued;
    });
    this.#cache.delete(merchantId);
    return secret;
  }

  /** When each older secret that still signs beside the current one stops, soonest first; read, never opened. */
  async olderSigningUntil(merchantId: string): Promise<number[]> {
    const rows = await this.#repo.activeWebhookSecrets(merchantId, this.#now());
    return rows
      .flatMap((row) => (row.expires_at === null ? [] : [Number(row.expires_at)]))
      .sort((a, b) => a - b);
  }

  /** The secrets to sign a delivery with now: the current one first, then unexpired older ones. */
  async active(merchantId: string): Promise<string[]> {
    const now = this.#now();
    let secrets = this.#cache.get(merchantId);
    if (!secrets) {
      const rows = await this.#repo.activeWebhookSecrets(merchantId, now);
      secrets = rows.map((row) => ({
        secret: this.#keyRing.open(row.secret_ciphertext, 'webhook_secrets.secret_ciphertext', merchantId),
        expiresAt: row.expires_at === null ? null : Number(row.expires_at),
      }));
      this.#cache.set(merchantId, secrets);
    }
    // Expiry is checked on every call, so a cached list never signs with a secret past its time.
    return secrets
      .filter((entry) => entry.expiresAt === null || entry.expiresAt > now)
      .map((entry) => entry.secret);
  }
}
