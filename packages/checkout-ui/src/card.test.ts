import { describe, expect, it } from 'vitest';
import {
  checkCardNumber,
  formatCardNumber,
  formatExpiry,
  isExpired,
  isValidCvv,
  maskExpiryInput,
  parseExpiry,
} from './card.js';

const MAY_2026 = new Date(2026, 4, 15);

describe('card number', () => {
  it.each([
    ['4111 1111 1111 1111', 'visa', 'Visa', 3],
    ['5555555555554444', 'mastercard', 'Mastercard', 3],
    ['378282246310005', 'american-express', 'American Express', 4],
    ['6011111111111117', 'discover', 'Discover', 3],
  ])('accepts %s as %s', (number, brand, brandName, cvvSize) => {
    const check = checkCardNumber(number);
    expect(check).toMatchObject({ brand, brandName, cvvSize, valid: true });
  });

  it('rejects a number that fails the Luhn check', () => {
    const check = checkCardNumber('4111111111111112');
    expect(check.valid).toBe(false);
    expect(check.brand).toBe('visa');
  });

  it('does not call a partial number wrong while it is being typed', () => {
    expect(checkCardNumber('4111 11')).toMatchObject({ valid: false, potentiallyValid: true });
    expect(checkCardNumber('')).toMatchObject({ valid: false, brand: null });
  });

  it('groups digits the way the brand prints them', () => {
    expect(formatCardNumber('4111111111111111')).toBe('4111 1111 1111 1111');
    expect(formatCardNumber('378282246310005')).toBe('3782 822463 10005');
    expect(formatCardNumber('4111-1111')).toBe('4111 1111');
  });
});

describe('expiry', () => {
  it.each([
    ['12/29', { month: 12, year: 2029 }],
    ['5/26', { month: 5, year: 2026 }],
    ['05/2027', { month: 5, year: 2027 }],
    ['0128', { month: 1, year: 2028 }],
  ])('reads %s', (value, expiry) => {
    expect(parseExpiry(value, MAY_2026)).toEqual(expiry);
  });

  it.each(['04/26', '13/27', '00/27', '12', 'ab/cd', '12/60'])('refuses %s', (value) => {
    expect(parseExpiry(value, MAY_2026)).toBeNull();
  });

  it('treats a card as good through its expiry month', () => {
    expect(isExpired({ month: 5, year: 2026 }, MAY_2026)).toBe(false);
    expect(isExpired({ month: 4, year: 2026 }, MAY_2026)).toBe(true);
  });

  it('formats and masks', () => {
    expect(formatExpiry(1, 2029)).toBe('01/29');
    expect(maskExpiryInput('1229')).toBe('12/29');
    expect(maskExpiryInput('4')).toBe('04/');
    expect(maskExpiryInput('1')).toBe('1');
  });
});

describe('security code', () => {
  it('needs exactly the brand’s number of digits', () => {
    expect(isValidCvv('123', 3)).toBe(true);
    expect(isValidCvv('1234', 3)).toBe(false);
    expect(isValidCvv('1234', 4)).toBe(true);
    expect(isValidCvv('12a', 3)).toBe(false);
  });
});
