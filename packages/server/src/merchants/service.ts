import { type Actor, type AuditAction, type AuditDetails, recordAudit } from '../audit/index.js';
import type { Db } from '../db/index.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import type { KeyRing } from '../vault/keyring.js';
import { WebhookDestinations } from '../webhooks/url-guard.js';
import { type ApiKeyInfo, ApiKeys, type NewApiKey, type RefusedKey } from './api-keys.js';
import { TtlCache } from './cache.js';
import { type MerchantChanges, type MerchantRow, MerchantsRepo, toMerchant } from './repo.js';
import type { CredentialType, Merchant } from './types.js';
import {
  type CreateMerchantInput,
  type MerchantPatch,
  type MerchantSettings,
  validateCredentialTypes,
  validateName,
  validateSettings,
  type WalletEnv,
} from './validation.js';
import { WebhookSecrets } from './webhook-secrets.js';

export interface MerchantsOptions {
  db: Db;
  keyRing: KeyRing;
  env: WalletEnv;
  /** Where webhook URLs may point (WEBHOOK_ALLOWED_NETWORKS, WEBHOOK_LOOPBACK); public addresses only by default. */
  webhookDestinations?: WebhookDestinations;
  /** Milliseconds since the epoch; injected by tests. */
  now?: () => number;
  /** Lifetime of the in-memory key, merchant and webhook-secret caches; 5 s unless said otherwise, 0 turns them off. */
  cacheTtlMs?: number;
  /** Entries per cache. */
  cacheMaxEntries?: number;
}

export interface CreatedMerchant {
  merchant: Merchant;
  /** Shown once: only its hash is stored. */
  apiKey: string;
  /** Shown once: stored encrypted. */
  webhookSecret: string;
}

/** 5 s: short enough that a revoke elsewhere takes effect quickly, long enough to spare the database. */
export const DEFAULT_CACHE_TTL_MS = 5_000;
const DEFAULT_CACHE_MAX_ENTRIES = 10_000;

function toChanges(settings: MerchantSettings): MerchantChanges {
  const changes: MerchantChanges = {};
  if (settings.name !== undefined) changes.name = settings.name;
  if (settings.webhookUrl !== undefined) changes.webhook_url = settings.webhookUrl;
  if (settings.allowedOrigins !== undefined)
    changes.allowed_origins = JSON.stringify(settings.allowedOrigins);
  if (settings.variant !== undefined) changes.variant = settings.variant;
  if (settings.authorizationMode !== undefined) changes.authorization_mode = settings.authorizationMode;
  if (settings.shippingMethods !== undefined) {
    changes.shipping_methods = JSON.stringify(settings.shippingMethods);
  }
  if (settings.taxSettings !== undefined) changes.tax_settings = JSON.stringify(settings.taxSettings);
  if (settings.rememberDevices !== undefined) changes.remember_devices = settings.rememberDevices ? 1 : 0;
  return changes;
}

/**
 * The settings an audit event shows as they became: what decides where card data and orders go, and how
 * payments are taken. Shipping methods and tax settings are only named as changed.
 */
function auditedSettings(merchant: Merchant): AuditDetails {
  return {
    name: merchant.name,
    webhookUrl: merchant.webhookUrl,
    allowedOrigins: merchant.allowedOrigins,
    variant: merchant.variant,
    authorizationMode: merchant.authorizationMode,
    rememberDevices: merchant.rememberDevices,
  };
}

function pick(details: AuditDetails, keys: readonly string[]): AuditDetails {
  return Object.fromEntries(Object.entries(details).filter(([key]) => keys.includes(key)));
}

function notFound(id: string): NotFoundError {
  return new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${id} does not exist`);
}

/**
 * Merchant accounts, their API keys and their webhook secrets. One instance per process; it holds short
 * in-memory caches for the hot paths (`authenticate`, `get`, `activeWebhookSecrets`).
 */
export class Merchants {
  readonly #repo: MerchantsRepo;
  readonly #destinations: WebhookDestinations;
  readonly #now: () => number;
  readonly #apiKeys: ApiKeys;
  readonly #webhookSecrets: WebhookSecrets;
  /** Id → merchant, for `get`, which every webhook delivery calls. */
  readonly #byId: TtlCache<string, Merchant>;
  /** Bumped on every change: a look-up that started before it must not fill the cache after it. */
  #generation = 0;

  constructor(options: MerchantsOptions) {
    this.#repo = new MerchantsRepo(options.db);
    this.#destinations =
      options.webhookDestinations ?? new WebhookDestinations(options.env, { loopback: false });
    this.#now = options.now ?? Date.now;
    const cache = {
      now: this.#now,
      cacheTtlMs: options.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS,
      cacheMaxEntries: options.cacheMaxEntries ?? DEFAULT_CACHE_MAX_ENTRIES,
    };
    this.#apiKeys = new ApiKeys({ repo: this.#repo, env: options.env, ...cache });
    this.#webhookSecrets = new WebhookSecrets({ repo: this.#repo, keyRing: options.keyRing, ...cache });
    this.#byId = new TtlCache({ ttlMs: cache.cacheTtlMs, maxEntries: cache.cacheMaxEntries, now: this.#now });
  }

  /** Creates a merchant with its first API key and webhook secret, all in one transaction. */
  async create(input: CreateMerchantInput, by: Actor): Promise<CreatedMerchant> {
    if (typeof input !== 'object' || input === null) throw new ValidationError('merchant must be an object');
    const name = validateName(input.name);
    const settings = validateSettings({ ...input, name }, this.#destinations);
    const credentialTypes =
      input.credentialTypes === undefined ? [] : validateCredentialTypes(input.credentialTypes);
    const now = this.#now();
    const row: MerchantRow = {
      id: newId('merchant'),
      name,
      webhook_url: settings.webhookUrl ?? null,
      allowed_origins: JSON.stringify(settings.allowedOrigins ?? []),
      credential_types: JSON.stringify(credentialTypes),
      credentials_approved_at: credentialTypes.length > 0 ? now : null,
      variant: settings.variant ?? 'standard',
      authorization_mode: settings.authorizationMode ?? 'service',
      shipping_methods: JSON.stringify(settings.shippingMethods ?? []),
      tax_settings: JSON.stringify(settings.taxSettings ?? { ratesByState: {} }),
      remember_devices: settings.rememberDevices === false ? 0 : 1,
      created_at: now,
      updated_at: now,
    };
    return this.#repo.transaction(async (repo, trx) => {
      await repo.insertMerchant(row);
      const key = await this.#apiKeys.issue(repo, row.id);
      const webhookSecret = await this.#webhookSecrets.issue(repo, row.id);
      const merchant = toMerchant(row);
      const details = { ...auditedSettings(merchant), credentialTypes, apiKeyId: key.id };
      await recordAudit(trx, { actor: by, action: 'merchant.created', merchantId: row.id, details }, now);
      return { merchant, apiKey: key.apiKey, webhookSecret };
    });
  }

  /**
   * The merchant, or undefined. Cached like `authenticate`: a change made in this process shows at once,
   * one made in another (the CLI) within the cache lifetime (5 s by default).
   */
  async get(id: string): Promise<Merchant | undefined> {
    const cached = this.#byId.get(id);
    if (cached) return cached;
    const generation = this.#generation;
    const row = await this.#repo.findMerchant(id);
    const merchant = row && toMerchant(row);
    if (merchant && generation === this.#generation) this.#byId.set(id, merchant);
    return merchant;
  }

  /** Every merchant, oldest first. */
  async list(): Promise<Merchant[]> {
    return (await this.#repo.listMerchants()).map(toMerchant);
  }

  /**
   * One line per merchant whose saved settings production no longer accepts: http origins kept from a
   * version that allowed them. They keep working; the operator is told at start to replace them.
   */
  async productionWarnings(): Promise<string[]> {
    const warnings: string[] = [];
    for (const merchant of await this.list()) {
      const http = merchant.allowedOrigins.filter((origin) => origin.startsWith('http:'));
      if (http.length === 0) continue;
      warnings.push(
        `merchant ${merchant.id} allows http origins (${http.join(', ')}); production accepts https origins only: list every origin it should keep, https, with npx wallet-checkout merchant update ${merchant.id} --origin https://… (one --origin each; they replace the list)`,
      );
    }
    return warnings;
  }

  /** Changes the fields present in `patch`, with the same rules as `create`. */
  async update(id: string, patch: MerchantPatch, by: Actor): Promise<Merchant> {
    const settings = validateSettings(patch, this.#destinations);
    const changes = toChanges(settings);
    if (Object.keys(changes).length === 0) {
      const current = await this.get(id);
      if (!current) throw notFound(id);
      return current;
    }
    const changed = Object.keys(settings);
    return this.#write(id, changes, by, (merchant, before) => ({
      action: 'merchant.updated',
      details: {
        changed,
        ...pick(auditedSettings(merchant), changed),
        previous: pick(auditedSettings(before), changed),
      },
    }));
  }

  /**
   * Approves the merchant for the credentials flow with these credential types (the webhook carries one
   * entry per type). An empty list withdraws the approval. The types it already has change nothing: no
   * audit event, and the approval keeps its date.
   */
  async approveCredentials(id: string, types: CredentialType[], by: Actor): Promise<Merchant> {
    const credentialTypes = validateCredentialTypes(types);
    const changes = {
      credential_types: JSON.stringify(credentialTypes),
      credentials_approved_at: credentialTypes.length > 0 ? this.#now() : null,
    };
    return this.#write(
      id,
      changes,
      by,
      (_merchant, before) => ({
        action:
          credentialTypes.length > 0 ? 'merchant.credentials_approved' : 'merchant.credentials_withdrawn',
        details: { credentialTypes, previous: { credentialTypes: before.credentialTypes } },
      }),
      (before) => before.credentialTypes.join() === credentialTypes.join(),
    );
  }

  /**
   * Writes the changes and their audit event, which `audited` describes from the merchant as it became and
   * as it was; or nothing, when `unchanged` says the merchant already is as asked.
   */
  async #write(
    id: string,
    changes: MerchantChanges,
    by: Actor,
    audited: (merchant: Merchant, before: Merchant) => { action: AuditAction; details: AuditDetails },
    unchanged: (before: Merchant) => boolean = () => false,
  ): Promise<Merchant> {
    const row = await this.#repo.transaction(async (repo, trx) => {
      const now = this.#now();
      // Locked (PostgreSQL) before it is read: the event's "before" is what this change replaced.
      const before = (await repo.lockMerchant(id)) ? await repo.findMerchant(id) : undefined;
      if (before && unchanged(toMerchant(before))) return before;
      const updated = before && (await repo.updateMerchant(id, changes, now));
      if (!before || !updated) throw notFound(id);
      const event = audited(toMerchant(updated), toMerchant(before));
      await recordAudit(trx, { actor: by, merchantId: id, ...event }, now);
      return updated;
    });
    this.#apiKeys.forgetMerchant(id);
    this.#byId.delete(id);
    this.#generation++;
    return toMerchant(row);
  }

  // --- API keys ---

  /** A new key for the merchant (several may be live at once, e.g. while one is being replaced). */
  createApiKey(merchantId: string, by: Actor): Promise<NewApiKey> {
    return this.#apiKeys.create(merchantId, by);
  }

  listApiKeys(merchantId: string): Promise<ApiKeyInfo[]> {
    return this.#apiKeys.list(merchantId);
  }

  /** By its id (`key_…`) or the key itself (`sk_…`). */
  revokeApiKey(keyIdOrKey: string, by: Actor): Promise<ApiKeyInfo> {
    return this.#apiKeys.revoke(keyIdOrKey, by);
  }

  /**
   * The merchant owning a live key of this environment, or undefined. Cached for a few seconds: a revoke in
   * this process applies at once, one in another process within the cache lifetime (5 s by default).
   */
  authenticate(apiKey: string): Promise<Merchant | undefined> {
    return this.#apiKeys.authenticate(apiKey);
  }

  /** The id (`key_…`) of a live key: which of a merchant's keys took an audited action. */
  apiKeyIdOf(apiKey: string): Promise<string | undefined> {
    return this.#apiKeys.idOf(apiKey);
  }

  /** Why `authenticate` refused this key: another environment's, revoked (whose), or unknown. */
  explainRefusal(apiKey: string): Promise<RefusedKey> {
    return this.#apiKeys.explainRefusal(apiKey);
  }

  /** What `merchant show` and `GET /account` tell of the keys and secrets: never a key or a secret. */
  async credentialsState(
    merchantId: string,
  ): Promise<{ liveApiKeys: number; olderWebhookSecretsUntil: number[] }> {
    const [keys, olderWebhookSecretsUntil] = await Promise.all([
      this.listApiKeys(merchantId),
      this.olderWebhookSecretsUntil(merchantId),
    ]);
    return { liveApiKeys: keys.filter((key) => key.revokedAt === null).length, olderWebhookSecretsUntil };
  }

  // --- webhook secrets ---

  /** When each older webhook secret that still signs stops (see WebhookSecrets.olderSigningUntil). */
  olderWebhookSecretsUntil(merchantId: string): Promise<number[]> {
    return this.#webhookSecrets.olderSigningUntil(merchantId);
  }

  /** A new current secret (returned once); older ones keep signing for `overlapSeconds` (24 h by default). */
  rotateWebhookSecret(
    merchantId: string,
    by: Actor,
    options: { overlapSeconds?: number } = {},
  ): Promise<string> {
    return this.#webhookSecrets.rotate(merchantId, by, options);
  }

  /** Secrets to sign a delivery with: current first, then unexpired older ones; [] for an unknown merchant. */
  activeWebhookSecrets(merchantId: string): Promise<string[]> {
    return this.#webhookSecrets.active(merchantId);
  }
}
