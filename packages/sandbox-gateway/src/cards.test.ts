import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { brandOf, isAccountNumber, isExpired, isWellFormedCryptogram, passesLuhn } from './cards.js';

describe('card facts', () => {
  it('checks Luhn on published test numbers', () => {
    for (const valid of [
      '4111111111111111',
      '5555555555554444',
      '378282246310005',
      '6011111111111117',
      '79927398713',
    ]) {
      expect(passesLuhn(valid)).toBe(true);
    }
    for (const invalid of ['4111111111111112', '79927398710', '', '4', '4111-1111-1111-1111']) {
      expect(passesLuhn(invalid)).toBe(false);
    }
    expect(isAccountNumber('79927398713')).toBe(false);
  });

  it('names networks by prefix', () => {
    expect(brandOf('4111111111111111')).toBe('visa');
    expect(brandOf('5555555555554444')).toBe('mastercard');
    expect(brandOf('2223003122003222')).toBe('mastercard');
    expect(brandOf('378282246310005')).toBe('amex');
    expect(brandOf('6011111111111117')).toBe('discover');
    expect(brandOf('3530111333300000')).toBe('unknown');
  });

  it('keeps a card valid through the last day of its expiry month, in UTC', () => {
    const lastDay = new Date('2030-06-30T23:59:59Z');
    expect(isExpired(6, 2030, lastDay)).toBe(false);
    expect(isExpired(6, 2030, new Date('2030-07-01T00:00:00Z'))).toBe(true);
    expect(isExpired(12, 2029, lastDay)).toBe(true);
    expect(isExpired(1, 2031, lastDay)).toBe(false);
  });

  it('accepts only 20 bytes of canonical base64 as a cryptogram', () => {
    expect(isWellFormedCryptogram(randomBytes(20).toString('base64'))).toBe(true);
    expect(isWellFormedCryptogram(randomBytes(21).toString('base64'))).toBe(false);
    expect(isWellFormedCryptogram(randomBytes(20).toString('base64url'))).toBe(false);
    // The bytes of `A…AA=`, but the last character sets bits that canonical base64 leaves at zero.
    expect(isWellFormedCryptogram(`${'A'.repeat(26)}B=`)).toBe(false);
    expect(isWellFormedCryptogram(`${'A'.repeat(26)}E=`)).toBe(true);
  });
});
