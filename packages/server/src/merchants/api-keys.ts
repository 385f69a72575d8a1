/**
 * Merchant API keys. A key is `sk_test_` (staging) or `sk_live_` (production) followed by 32 base62
 * characters (about 190 bits). Only its SHA-256 is stored, with the first characters for listings. A fast
 * unsalted hash is enough: the key is random and long, so there is nothing to guess from the hash.
 *
 * `authenticate` runs on every API request. It finds a key by its hash (so no secret is ever compared
 * character by character) and keeps hash → merchant in memory for a few seconds. A revoke or a merchant
 * update in this process drops the entry at once; another process sees it within the cache's lifetime
 * (5 s by default). A look-up that finds a live key records its use, at most once a minute per process.
 */
import { createHash } from 'node:crypto';
import { type Actor, recordAudit } from '../audit/index.js';
import { NotFoundError } from '../errors.js';
import { newId, randomToken } from '../ids.js';
import { TtlCache } from './cache.js';
import { type ApiKeyRow, type MerchantsRepo, toMerchant } from './repo.js';
import type { Merchant } from './types.js';
import type { WalletEnv } from './validation.js';

export const API_KEY_PREFIXES: Record<WalletEnv, string> = { staging: 'sk_test_', production: 'sk_live_' };
const KEY_BODY = /^[0-9A-Za-z]{32}$/;
const KEY_BODY_LENGTH = 32;
/** `sk_test_` plus 4 random characters: enough to tell keys apart, far too little to guess the rest. */
const DISPLAY_PREFIX_LENGTH = 12;
/** A key's last use is recorded to the minute: at most one write a minute per key and process. */
const LAST_USED_PRECISION_MS = 60_000;

export interface ApiKeyInfo {
  id: string;
  merchantId: string;
  /** The first characters of the key, e.g. `sk_test_Ab3x`. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
  /** When the key last authenticated a request, to the minute; null if it never has. */
  lastUsedAt: number | null;
}

/** Why a key was refused; a revoked one names its merchant and its id, never the key. */
export interface RefusedKey {
  reason: string;
  merchantId?: string;
  keyId?: string;
}

export interface NewApiKey {
  id: string;
  /** The whole key; shown once, never stored. */
  apiKey: string;
}

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

function toInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    prefix: row.prefix,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}

export class ApiKeys {
  readonly #repo: MerchantsRepo;
  readonly #keyPrefix: string;
  readonly #now: () => number;
  readonly #cache: TtlCache<string, Merchant>;
  /** Unknown or revoked hashes, so a client retrying with a dead key does not reach the database each time. */
  readonly #misses: TtlCache<string, true>;
  /** One database look-up per hash at a time, however many requests wait for it. */
  readonly #inflight = new Map<string, Promise<Merchant | undefined>>();
  /** Bumped on every invalidation: a look-up that started before it must not fill the cache after it. */
  #generation = 0;
  /** Key id → when this process last recorded the key's use. */
  readonly #usesRecorded = new Map<string, number>();

  constructor(options: {
    repo: MerchantsRepo;
    env: WalletEnv;
    now: () => number;
    cacheTtlMs: number;
    cacheMaxEntries: number;
  }) {
    this.#repo = options.repo;
    this.#keyPrefix = API_KEY_PREFIXES[options.env];
    this.#now = options.now;
    this.#cache = new TtlCache({
      ttlMs: options.cacheTtlMs,
      maxEntries: options.cacheMaxEntries,
      now: options.now,
    });
    this.#misses = new TtlCache({
      ttlMs: options.cacheTtlMs,
      maxEntries: Math.ceil(options.cacheMaxEntries / 10),
      now: options.now,
    });
  }

  /** Creates a key with `repo` (which may be bound to the caller's transaction). */
  async issue(repo: MerchantsRepo, merchantId: string): Promise<NewApiKey> {
    const apiKey = `${this.#keyPrefix}${randomToken(KEY_BODY_LENGTH)}`;
    const id = newId('apiKey');
    const hash = hashApiKey(apiKey);
    await repo.insertApiKey({
      id,
      merchant_id: merchantId,
      prefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH),
      hash,
      created_at: this.#now(),
      revoked_at: null,
      last_used_at: null,
    });
    this.#misses.delete(hash);
    return { id, apiKey };
  }

  async create(merchantId: string, by: Actor): Promise<NewApiKey> {
    return this.#repo.transaction(async (repo, trx) => {
      await this.#requireMerchant(repo, merchantId);
      const key = await this.issue(repo, merchantId);
      await recordAudit(
        trx,
        { actor: by, action: 'api_key.created', merchantId, subject: key.id },
        this.#now(),
      );
      return key;
    });
  }

  /** The merchant's keys, oldest first, without secrets. */
  async list(merchantId: string): Promise<ApiKeyInfo[]> {
    await this.#requireMerchant(this.#repo, merchantId);
    return (await this.#repo.listApiKeys(merchantId)).map(toInfo);
  }

  /**
   * Revokes a key, named by its id (`key_…`) or given whole (`sk_…`, as whoever found it leaked has it);
   * a second revoke keeps the first time, and records nothing. It stops working in this process at once.
   */
  async revoke(keyIdOrKey: string, by: Actor): Promise<ApiKeyInfo> {
    const whole = Object.values(API_KEY_PREFIXES).some((prefix) => keyIdOrKey.startsWith(prefix));
    const key = whole ? { hash: hashApiKey(keyIdOrKey) } : { id: keyIdOrKey };
    const row = await this.#repo.transaction(async (repo, trx) => {
      const now = this.#now();
      const found = await repo.revokeApiKey(key, now);
      if (!found) {
        // Never echo a key: this message reaches terminals and logs.
        const named = whole ? 'matching the key given' : keyIdOrKey;
        throw new NotFoundError('API_KEY_NOT_FOUND', `API key ${named} does not exist`);
      }
      const revoked = found.row;
      if (!found.revokedNow) return revoked;
      const event = {
        actor: by,
        action: 'api_key.revoked',
        merchantId: revoked.merchant_id,
        subject: revoked.id,
      } as const;
      const details = { prefix: revoked.prefix, revokedAt: Number(revoked.revoked_at) };
      await recordAudit(trx, { ...event, details }, now);
      return revoked;
    });
    // After the commit: a look-up before it would find the key live and cache it again.
    this.#cache.delete(row.hash);
    this.#invalidate();
    return toInfo(row);
  }

  /** The id (`key_…`) of a live key, for the audit trail of what it did; a database look-up. */
  async idOf(apiKey: string): Promise<string | undefined> {
    const found = await this.#repo.findByKeyHash(hashApiKey(apiKey));
    return found && found.revokedAt === null ? found.keyId : undefined;
  }

  /**
   * Why `authenticate` refused a key, for the log: a key of the other environment, one revoked (whose,
   * and which), or one unknown. A database look-up: called only for refusals that are logged.
   */
  async explainRefusal(apiKey: string): Promise<RefusedKey> {
    if (!apiKey.startsWith(this.#keyPrefix)) {
      const other = Object.entries(API_KEY_PREFIXES).find(([, prefix]) => apiKey.startsWith(prefix));
      return { reason: other ? `a ${other[0]} key` : 'not an API key' };
    }
    if (!KEY_BODY.test(apiKey.slice(this.#keyPrefix.length))) return { reason: 'not an API key' };
    const found = await this.#repo.findByKeyHash(hashApiKey(apiKey));
    if (found?.revokedAt == null) return { reason: 'unknown key' };
    return { reason: 'revoked key', merchantId: found.merchant.id, keyId: found.keyId };
  }

  async authenticate(apiKey: string): Promise<Merchant | undefined> {
    // A key of the other environment, or of no known shape, never reaches the database.
    if (typeof apiKey !== 'string' || !apiKey.startsWith(this.#keyPrefix)) return undefined;
    if (!KEY_BODY.test(apiKey.slice(this.#keyPrefix.length))) return undefined;
    const hash = hashApiKey(apiKey);
    const cached = this.#cache.get(hash);
    if (cached) return cached;
    if (this.#misses.get(hash)) return undefined;
    let pending = this.#inflight.get(hash);
    if (!pending) {
      pending = this.#load(hash, this.#generation);
      this.#inflight.set(hash, pending);
    }
    return pending;
  }

  /** Drops cached look-ups of one merchant, after its settings changed. */
  forgetMerchant(merchantId: string): void {
    this.#cache.deleteWhere((merchant) => merchant.id === merchantId);
    this.#invalidate();
  }

  async #load(hash: string, generation: number): Promise<Merchant | undefined> {
    try {
      const found = await this.#repo.findByKeyHash(hash);
      const merchant = found && found.revokedAt === null ? toMerchant(found.merchant) : undefined;
      if (found && merchant) await this.#recordUse(found.keyId);
      if (generation === this.#generation) {
        if (merchant) this.#cache.set(hash, merchant);
        else this.#misses.set(hash, true);
      }
      return merchant;
    } finally {
      // After an invalidation the map was cleared, and any entry for this hash belongs to a newer look-up.
      if (generation === this.#generation) this.#inflight.delete(hash);
    }
  }

  /**
   * Records the key's use, at most once a minute from this process (one request a minute per key waits
   * for the write). Each process writes its own, never moving the time back, so the recorded time is at
   * most a minute behind the key's last use. The record is advisory: a failed write does not fail the
   * request, and the next look-up of the key tries again.
   */
  async #recordUse(keyId: string): Promise<void> {
    const now = this.#now();
    const recorded = this.#usesRecorded.get(keyId);
    if (recorded !== undefined && now - recorded < LAST_USED_PRECISION_MS) return;
    try {
      await this.#repo.recordApiKeyUse(keyId, now);
      this.#usesRecorded.set(keyId, now);
    } catch {
      this.#usesRecorded.delete(keyId);
    }
  }

  #invalidate(): void {
    this.#generation++;
    this.#inflight.clear();
  }

  async #requireMerchant(repo: MerchantsRepo, merchantId: string): Promise<void> {
    if (!(await repo.findMerchant(merchantId))) {
      throw new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${merchantId} does not exist`);
    }
  }
}
