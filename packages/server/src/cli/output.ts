/** Output of the CLI: JSON on one line for machines, short text for people. */
import type { ApiKeyInfo, Merchant } from '../merchants/index.js';
import { dollars } from '../money.js';

/**
 * JSON on one line with a space after `:` and `,`, the form DESIGN.md shows for `merchant create --json`
 * (`{"merchantId": "...", "apiKey": "..."}`). Any JSON parser reads it.
 */
export function toJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(toJson).join(', ')}]`;
  if (typeof value === 'object' && value !== null && !('toJSON' in value)) {
    const entries = Object.entries(value).filter(([, inner]) => inner !== undefined);
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}: ${toJson(inner)}`).join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A time for text output: ISO 8601, or `-` for none. */
export function isoTime(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

/** A time for --json output: an ISO 8601 string, as the HTTP API writes times; null for none. */
export function jsonTime(ms: number): string;
export function jsonTime(ms: number | null): string | null;
export function jsonTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** A merchant as --json prints it. */
export function merchantJson(merchant: Merchant) {
  return { ...merchant, createdAt: jsonTime(merchant.createdAt) };
}

/** An API key's record as --json prints it (never the key: only its first characters). */
export function apiKeyJson(key: ApiKeyInfo) {
  return {
    ...key,
    createdAt: jsonTime(key.createdAt),
    revokedAt: jsonTime(key.revokedAt),
    lastUsedAt: jsonTime(key.lastUsedAt),
  };
}

/** Left-aligned columns under a header row. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** A merchant's settings, one per line, then `more` (what `merchant show` adds of its keys and secrets). */
export function describeMerchant(merchant: Merchant, more: [string, string][] = []): string {
  const rates = Object.entries(merchant.taxSettings.ratesByState).map(
    ([state, basisPoints]) => `${state} ${basisPoints / 100} %`,
  );
  const fields: [string, string][] = [
    ['id', merchant.id],
    ['name', merchant.name],
    ['webhook URL', merchant.webhookUrl ?? '(none)'],
    ['allowed origins', merchant.allowedOrigins.join(', ') || '(none)'],
    [
      'credentials flow',
      merchant.credentialTypes.length > 0
        ? `approved for ${merchant.credentialTypes.join(', ')}`
        : 'not approved',
    ],
    ['variant', merchant.variant],
    ['authorization', merchant.authorizationMode],
    [
      'shipping methods',
      merchant.shippingMethods
        .map((method) => `${method.name} ${dollars(method.price)} [${method.externalId}]`)
        .join('; ') || '(none)',
    ],
    ['tax rates', rates.join(', ') || '(none)'],
    ['remember devices', merchant.rememberDevices ? 'on' : 'off'],
    ['created', isoTime(merchant.createdAt)],
    ...more,
  ];
  const width = Math.max(...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `${`${label}:`.padEnd(width + 1)} ${value}`).join('\n');
}

export function merchantsTable(merchants: Merchant[]): string {
  return table(
    ['ID', 'NAME', 'VARIANT', 'AUTHORIZATION', 'CREDENTIALS', 'CREATED'],
    merchants.map((merchant) => [
      merchant.id,
      merchant.name,
      merchant.variant,
      merchant.authorizationMode,
      merchant.credentialTypes.join(',') || '-',
      isoTime(merchant.createdAt),
    ]),
  );
}

export function apiKeysTable(keys: ApiKeyInfo[]): string {
  return table(
    ['ID', 'KEY', 'CREATED', 'LAST USED', 'REVOKED'],
    keys.map((key) => [
      key.id,
      `${key.prefix}…`,
      isoTime(key.createdAt),
      isoTime(key.lastUsedAt),
      isoTime(key.revokedAt),
    ]),
  );
}
