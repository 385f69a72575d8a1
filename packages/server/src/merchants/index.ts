/**
 * Merchants: accounts and their settings, API keys (stored as SHA-256 only) and webhook signing secrets
 * (stored encrypted, rotated with an overlap). Other areas use this face, never the tables.
 *
 * Caching: `authenticate` and `activeWebhookSecrets` keep results in memory for a few seconds (5 s by
 * default). A change made through this process's instance applies at once; with several processes, a
 * revoked key, a merchant update or a rotated secret is seen by the others within that time.
 */
export {
  API_KEY_PREFIXES,
  type ApiKeyInfo,
  hashApiKey,
  type NewApiKey,
  type RefusedKey,
} from './api-keys.js';
export { type CreatedMerchant, DEFAULT_CACHE_TTL_MS, Merchants, type MerchantsOptions } from './service.js';
export * from './types.js';
export type { CreateMerchantInput, MerchantPatch, ShippingMethodInput } from './validation.js';
export { isCspOrigin } from './validation.js';
export { DEFAULT_OVERLAP_SECONDS, MAX_OVERLAP_SECONDS, WEBHOOK_SECRET_PREFIX } from './webhook-secrets.js';
