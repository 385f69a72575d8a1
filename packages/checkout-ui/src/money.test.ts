import { describe, expect, it } from 'vitest';
import { formatMoney } from './money.js';

describe('formatMoney', () => {
  it.each([
    [2599, '$25.99'],
    [0, '$0.00'],
    [5, '$0.05'],
    [100, '$1.00'],
    [123456789, '$1,234,567.89'],
    [-250, '-$2.50'],
  ])('shows %i cents as %s', (cents, shown) => {
    expect(formatMoney(cents)).toBe(shown);
  });

  it('uses the currency’s own minor unit', () => {
    expect(formatMoney(2599, 'EUR', 'en-US')).toBe('€25.99');
    expect(formatMoney(2599, 'JPY', 'en-US')).toBe('¥2,599');
  });

  it('refuses amounts that are not integer cents', () => {
    expect(() => formatMoney(25.99)).toThrow(/integer number of cents/);
    expect(() => formatMoney(Number.NaN)).toThrow(TypeError);
  });
});
