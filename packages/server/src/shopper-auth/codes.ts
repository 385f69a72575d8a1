import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** 6 digits: typed by hand from a phone; the tries limit, not the length, keeps guessing useless. */
export const CODE_DIGITS = 6;

/** A fresh code from the system's CSPRNG, every one of the 10^6 equally likely. */
export function newCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
}

export function isCodeShaped(code: string): boolean {
  return /^\d{6}$/.test(code);
}

/**
 * Keyed hash of a code. A million codes are hashed in a blink, so a plain hash would give the code away
 * to anyone who reads the table; the key lives only in the key ring. Email and order are in the input so
 * that a row's hash is worth nothing for another pair.
 */
export function hashCode(key: Buffer, input: { orderId: string; email: string; code: string }): string {
  return createHmac('sha256', key)
    .update(`${input.orderId}\n${input.email}\n${input.code}`)
    .digest('base64url');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** 32 random bytes (256 bits), base64url: 43 characters. */
export function newShopperToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Tokens carry 256 random bits, so a plain SHA-256 is enough to make a stolen table useless. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Case-insensitive; surrounding spaces are ignored (as the wallet compares emails). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isEmail(email: string): boolean {
  return email.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(email);
}

/**
 * Where a code went, enough for the shopper to recognise the address and no more for someone who typed
 * another person's: `test.shopper@example.com` → `t***r@example.com` (the length is hidden too).
 */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  // By code point: a character outside the BMP (an emoji) must not be cut in half.
  const local = [...email.slice(0, at)];
  const last = local.length > 2 ? local.at(-1) : '';
  return `${local[0] ?? ''}***${last}@${email.slice(at + 1)}`;
}
