// Only the card-number check: the package's index would bring its other validators into the bundle too.
import { cardNumber } from 'card-validator/dist/card-number.js';

/**
 * Card entry for new shoppers: the same library as the server (card-validator) so the brand and the Luhn
 * check the shopper sees are the ones the server will apply. Nothing here keeps a card number: the values
 * live in the form until they are sent once, over the same origin, to the enrolment endpoint.
 */

export const digitsOnly = (value: string): string => value.replace(/\D/g, '');

export interface CardNumberCheck {
  /** card-validator's type (`visa`, `mastercard`, `american-express`…), null until recognisable. */
  brand: string | null;
  /** The brand as people write it (`Visa`, `American Express`). */
  brandName: string | null;
  /** Digits of the security code this brand uses (3, or 4 for American Express). */
  cvvSize: number;
  /** Where the spaces go as the shopper types (`4111 1111 1111 1111`). */
  gaps: number[];
  maxLength: number;
  valid: boolean;
  /** Could still become valid with more digits (no error shown yet while typing). */
  potentiallyValid: boolean;
}

export function checkCardNumber(value: string): CardNumberCheck {
  const digits = digitsOnly(value);
  const result = cardNumber(digits);
  const card = result.card;
  return {
    brand: card?.type ?? null,
    brandName: card?.niceType ?? null,
    cvvSize: card?.code.size ?? 3,
    gaps: card?.gaps ?? [4, 8, 12],
    maxLength: card ? Math.max(...card.lengths) : 19,
    valid: result.isValid,
    potentiallyValid: result.isPotentiallyValid,
  };
}

/** `4111111111111111` → `4111 1111 1111 1111`, following the brand's grouping (4-6-5 for Amex). */
export function formatCardNumber(value: string): string {
  const check = checkCardNumber(value);
  const digits = digitsOnly(value).slice(0, check.maxLength);
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (check.gaps.includes(i)) out += ' ';
    out += digits[i];
  }
  return out;
}

export interface Expiry {
  month: number;
  /** Four digits. */
  year: number;
}

/**
 * Reads `MM/YY` (also `MM/YYYY`, `MMYY`) and refuses a past month. `now` is injectable for tests.
 * A card is good through the last day of its expiry month.
 */
export function parseExpiry(value: string, now: Date = new Date()): Expiry | null {
  const match = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/.exec(value);
  if (!match) return null;
  const month = Number(match[1]);
  let year = Number(match[2]);
  if (year < 100) year += 2000;
  if (month < 1 || month > 12) return null;
  if (isExpired({ month, year }, now)) return null;
  if (year > now.getFullYear() + 20) return null;
  return { month, year };
}

export function isExpired(expiry: Expiry, now: Date = new Date()): boolean {
  const thisMonth = now.getFullYear() * 12 + now.getMonth();
  return expiry.year * 12 + (expiry.month - 1) < thisMonth;
}

/** `1` `2029` → `01/29`. */
export const formatExpiry = (month: number, year: number): string =>
  `${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`;

/** Typing help: `122` → `12/2`, keeps what the shopper typed otherwise. */
export function maskExpiryInput(value: string): string {
  const digits = digitsOnly(value).slice(0, 4);
  if (digits.length === 1 && Number(digits) > 1) return `0${digits}/`;
  return digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
}

export const isValidCvv = (value: string, size: number): boolean => new RegExp(`^\\d{${size}}$`).test(value);
