/**
 * Rules for merchant settings. Each check throws a ValidationError whose message names the field and the
 * rule, so the CLI and any admin route can show it as is. Inputs are checked at runtime (they may come
 * from JSON), not only by their TypeScript types.
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { anAddress, type WebhookDestinations } from '../webhooks/index.js';
import {
  AUTHORIZATION_MODES,
  type AuthorizationMode,
  CREDENTIAL_TYPES,
  type CredentialType,
  type ShippingMethod,
  type TaxSettings,
  VARIANTS,
  type Variant,
} from './types.js';

export type WalletEnv = 'staging' | 'production';

export interface ShippingMethodInput {
  /** Assigned by the service when absent. */
  externalId?: string;
  name: string;
  /** Integer cents. */
  price: number;
}

export interface MerchantSettingsInput {
  webhookUrl?: string | null;
  allowedOrigins?: string[];
  variant?: Variant;
  authorizationMode?: AuthorizationMode;
  shippingMethods?: ShippingMethodInput[];
  taxSettings?: TaxSettings;
  rememberDevices?: boolean;
}

export interface CreateMerchantInput extends MerchantSettingsInput {
  name: string;
  credentialTypes?: CredentialType[];
}

export interface MerchantPatch extends MerchantSettingsInput {
  name?: string;
}

/** Validated, normalized settings: only the fields that were given. */
export interface MerchantSettings {
  name?: string;
  webhookUrl?: string | null;
  allowedOrigins?: string[];
  variant?: Variant;
  authorizationMode?: AuthorizationMode;
  shippingMethods?: ShippingMethod[];
  taxSettings?: TaxSettings;
  rememberDevices?: boolean;
}

const NAME_MAX = 200;
const URL_MAX = 2048;
const ORIGINS_MAX = 50;
const SHIPPING_METHODS_MAX = 50;
const SHIPPING_NAME_MAX = 100;
const STATES_MAX = 100;
const BASIS_POINTS_MAX = 10_000;
const EXTERNAL_ID = /^[A-Za-z0-9_-]{1,64}$/;
const STATE = /^[A-Z]{2}$/;
// scheme://host[:port] and nothing after it; the host part is checked again by the URL parser.
const ORIGIN = /^https?:\/\/[^/?#@\s]+$/i;

/**
 * A host as the URL parser gives it (lower case, international names in punycode) that a Content
 * Security Policy can name: dot-separated labels of letters, digits and inner hyphens, or an IPv6
 * literal. No `*`, `;`, `,` or quote, which would widen or break the checkout's `frame-ancestors`.
 */
const CSP_HOST =
  /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)$/;

/** Whether a CSP source list can name `origin` as it is (see CSP_HOST). */
export function isCspOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return url.origin === origin && CSP_HOST.test(url.hostname);
  } catch {
    return false;
  }
}

/** A value shortened for an error message, so a huge or hostile input does not flood the output. */
function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(text && text.length > 80 ? `${text.slice(0, 80)}…` : (text ?? String(value)));
}

export function validateName(value: unknown): string {
  if (typeof value !== 'string') throw new ValidationError('name must be a string');
  const name = value.trim();
  if (name.length < 1 || name.length > NAME_MAX) {
    throw new ValidationError(`name must be 1 to ${NAME_MAX} characters, got ${name.length}`);
  }
  return name;
}

export function validateWebhookUrl(value: unknown, destinations: WebhookDestinations): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > URL_MAX) {
    throw new ValidationError(`webhookUrl must be an absolute http(s) URL of at most ${URL_MAX} characters`);
  }
  const rule = `webhookUrl must be an absolute http(s) URL, got ${shown(value)}`;
  // The prefix test also refuses what the URL parser would quietly repair (`http:host`, spaces).
  if (!/^https?:\/\/[^\s]+$/i.test(value)) throw new ValidationError(rule);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError(rule);
  }
  if (url.username || url.password) {
    // Credentials in the URL would be stored and logged in clear; the webhook signature authenticates us.
    throw new ValidationError('webhookUrl must not contain a user name or password');
  }
  if (url.hash) throw new ValidationError('webhookUrl must not contain a #fragment');
  if (destinations.env === 'production' && url.protocol !== 'https:') {
    throw new ValidationError('webhookUrl must use https in production');
  }
  // Delivery's own classification. A name other than localhost is judged on the address it dials.
  const range = destinations.refusedHost(url.hostname);
  if (range !== undefined) {
    throw new ValidationError(
      `webhookUrl must not point to ${anAddress(range)} (${destinations.rule}), got ${shown(url.hostname)}`,
    );
  }
  return value;
}

/**
 * Origins are compared with the browser's `event.origin`, so they are stored in its normalized form. In
 * production they must be https: a page served over http can be rewritten by anyone on its network, who
 * would then talk to the checkout as the shop.
 */
export function validateAllowedOrigins(value: unknown, env: WalletEnv): string[] {
  if (!Array.isArray(value)) throw new ValidationError('allowedOrigins must be an array of origins');
  if (value.length > ORIGINS_MAX) {
    throw new ValidationError(`allowedOrigins must have at most ${ORIGINS_MAX} entries, got ${value.length}`);
  }
  const origins = value.map((entry, index) => {
    const field = `allowedOrigins[${index}]`;
    const rule = `${field} must be scheme://host[:port] with an http or https scheme, a host of letters, digits, hyphens and dots (no wildcard) and no path`;
    if (typeof entry !== 'string' || !ORIGIN.test(entry))
      throw new ValidationError(`${rule}, got ${shown(entry)}`);
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new ValidationError(`${rule}, got ${shown(entry)}`);
    }
    if (!isCspOrigin(url.origin)) throw new ValidationError(`${rule}, got ${shown(entry)}`);
    if (env === 'production' && url.protocol !== 'https:') {
      throw new ValidationError(`${field} must use https in production, got ${shown(entry)}`);
    }
    return url.origin;
  });
  return [...new Set(origins)];
}

export function validateCredentialTypes(value: unknown, field = 'credentialTypes'): CredentialType[] {
  if (!Array.isArray(value)) {
    throw new ValidationError(`${field} must be an array of ${CREDENTIAL_TYPES.join(', ')}`);
  }
  for (const [index, entry] of value.entries()) {
    if (!(CREDENTIAL_TYPES as readonly unknown[]).includes(entry)) {
      throw new ValidationError(
        `${field}[${index}] must be one of ${CREDENTIAL_TYPES.join(', ')}, got ${shown(entry)}`,
      );
    }
  }
  // Canonical order, no duplicates: the stored list reads the same however it was given.
  return CREDENTIAL_TYPES.filter((type) => value.includes(type));
}

function oneOf<T extends string>(field: string, allowed: readonly T[], value: unknown): T {
  if (!(allowed as readonly unknown[]).includes(value)) {
    throw new ValidationError(`${field} must be one of ${allowed.join(', ')}, got ${shown(value)}`);
  }
  return value as T;
}

/**
 * A shipping method given without an `externalId` is named after itself (`Next day` → `next-day`), so
 * that the id stays the same when the same list is set again (accents dropped: `Éclair` → `eclair`).
 * A name with no ASCII letter or digit (`速達`) gets `m-` and a hash of itself, as stable; two names that
 * make the same id, or one another method was given, are numbered in list order (`ground-2`).
 */
function idFromName(name: string, taken: (id: string) => boolean): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 60)
    .replace(/^-+|-+$/g, '');
  const stem = base || `m-${createHash('sha256').update(name.trim()).digest('hex').slice(0, 16)}`;
  let id = stem;
  for (let n = 2; taken(id); n++) id = `${stem}-${n}`;
  return id;
}

export function validateShippingMethods(value: unknown): ShippingMethod[] {
  if (!Array.isArray(value)) throw new ValidationError('shippingMethods must be an array');
  if (value.length > SHIPPING_METHODS_MAX) {
    throw new ValidationError(
      `shippingMethods must have at most ${SHIPPING_METHODS_MAX} entries, got ${value.length}`,
    );
  }
  const seen = new Set<string>();
  const given = new Set(value.map((entry) => (entry as { externalId?: unknown } | null)?.externalId));
  const taken = (id: string) => seen.has(id) || given.has(id);
  return value.map((entry: unknown, index): ShippingMethod => {
    const field = `shippingMethods[${index}]`;
    if (typeof entry !== 'object' || entry === null) {
      throw new ValidationError(`${field} must be an object with name and price`);
    }
    const { externalId, name, price } = entry as Record<string, unknown>;
    if (externalId !== undefined && (typeof externalId !== 'string' || !EXTERNAL_ID.test(externalId))) {
      throw new ValidationError(`${field}.externalId must be 1 to 64 letters, digits, - or _`);
    }
    if (typeof name !== 'string' || name.trim().length < 1 || name.trim().length > SHIPPING_NAME_MAX) {
      throw new ValidationError(`${field}.name must be 1 to ${SHIPPING_NAME_MAX} characters`);
    }
    if (typeof price !== 'number' || !Number.isSafeInteger(price) || price < 0) {
      throw new ValidationError(
        `${field}.price must be a whole number of cents, 0 or more, got ${shown(price)}`,
      );
    }
    const id = externalId ?? idFromName(name, taken);
    if (seen.has(id)) throw new ValidationError(`${field}.externalId must be unique, "${id}" is repeated`);
    seen.add(id);
    return { externalId: id, name: name.trim(), price };
  });
}

export function validateTaxSettings(value: unknown): TaxSettings {
  const rates = (value as { ratesByState?: unknown } | null)?.ratesByState;
  if (typeof value !== 'object' || value === null || typeof rates !== 'object' || rates === null) {
    throw new ValidationError('taxSettings must be an object { ratesByState: { [state]: basisPoints } }');
  }
  const entries = Object.entries(rates);
  if (entries.length > STATES_MAX) {
    throw new ValidationError(`taxSettings.ratesByState must have at most ${STATES_MAX} states`);
  }
  const ratesByState: Record<string, number> = {};
  for (const [state, rate] of entries) {
    if (!STATE.test(state)) {
      throw new ValidationError(
        `taxSettings.ratesByState keys must be two-letter upper-case state codes, got ${shown(state)}`,
      );
    }
    if (typeof rate !== 'number' || !Number.isInteger(rate) || rate < 0 || rate > BASIS_POINTS_MAX) {
      throw new ValidationError(
        `taxSettings.ratesByState.${state} must be a whole number of basis points from 0 to ${BASIS_POINTS_MAX}, got ${shown(rate)}`,
      );
    }
    ratesByState[state] = rate;
  }
  return { ratesByState };
}

/** Checks every field present in `input` (absent ones are left out of the result). */
export function validateSettings(input: MerchantPatch, destinations: WebhookDestinations): MerchantSettings {
  const { env } = destinations;
  if (typeof input !== 'object' || input === null)
    throw new ValidationError('merchant settings must be an object');
  const settings: MerchantSettings = {};
  if (input.name !== undefined) settings.name = validateName(input.name);
  if (input.webhookUrl !== undefined)
    settings.webhookUrl = validateWebhookUrl(input.webhookUrl, destinations);
  if (input.allowedOrigins !== undefined)
    settings.allowedOrigins = validateAllowedOrigins(input.allowedOrigins, env);
  if (input.variant !== undefined) settings.variant = oneOf('variant', VARIANTS, input.variant);
  if (input.authorizationMode !== undefined) {
    settings.authorizationMode = oneOf('authorizationMode', AUTHORIZATION_MODES, input.authorizationMode);
  }
  if (input.shippingMethods !== undefined) {
    settings.shippingMethods = validateShippingMethods(input.shippingMethods);
  }
  if (input.taxSettings !== undefined) settings.taxSettings = validateTaxSettings(input.taxSettings);
  if (input.rememberDevices !== undefined) {
    if (typeof input.rememberDevices !== 'boolean') {
      throw new ValidationError(`rememberDevices must be true or false, got ${shown(input.rememberDevices)}`);
    }
    settings.rememberDevices = input.rememberDevices;
  }
  return settings;
}
