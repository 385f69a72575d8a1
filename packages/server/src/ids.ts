import { randomBytes, randomUUID } from 'node:crypto';

/** Prefixes of the ids the interface leaves to us (Stripe/Svix style). */
const PREFIXES = {
  merchant: 'mch',
  apiKey: 'key',
  webhookSecret: 'wss',
  shopper: 'shp',
  vault: 'vlt',
  credentialsRequest: 'crq',
  externalResponse: 'ext',
  webhookMessage: 'msg',
  webhookAttempt: 'atm',
} as const;

export type IdKind = keyof typeof PREFIXES;
export type Id<K extends IdKind> = string & { readonly __id: K };

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 text; `length` characters carry about 5.95 bits each. */
export function randomToken(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    const byte = bytes[i] as number;
    // 248 = 4 * 62: dropping bytes above it keeps every character equally likely.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out.length === length ? out : out + randomToken(length - out.length);
}

/** A new prefixed id such as `crq_5Yw3…` (22 base62 characters, about 131 bits). */
export function newId<K extends IdKind>(kind: K): Id<K> {
  return `${PREFIXES[kind]}_${randomToken(22)}` as Id<K>;
}

/** Where the interface's samples show UUIDs (`paymentId`, `sessionId`), we keep UUIDs. */
export function newUuid(): string {
  return randomUUID();
}
