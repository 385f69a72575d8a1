import { describe, expect, it } from 'vitest';
import { taxesFor, taxOn } from './taxes.js';

describe('taxOn', () => {
  it.each([
    [1000, 825, 83], // 82.5 ¢: half a cent rounds up
    [1000, 824, 82], // 82.4 ¢
    [1001, 825, 83], // 82.5825 ¢
    [3700, 825, 305], // 305.25 ¢
    [2500, 625, 156], // 156.25 ¢
    [200, 625, 13], // 12.5 ¢
    [0, 825, 0],
    [3700, 0, 0],
    [99_999_999, 10_000, 99_999_999],
  ])('%i ¢ at %i bp is %i ¢', (subtotal, rate, expected) => {
    expect(taxOn(subtotal, rate)).toBe(expected);
  });
});

describe('taxesFor', () => {
  const settings = { ratesByState: { TX: 825, CA: 725 } };

  it('uses the rate of the address state, upper-cased', () => {
    expect(taxesFor(settings, 10_000, 'TX')).toBe(825);
    expect(taxesFor(settings, 10_000, ' ca ')).toBe(725);
  });

  it('taxes 0 in a state without a rate, or without an address', () => {
    expect(taxesFor(settings, 10_000, 'NY')).toBe(0);
    expect(taxesFor(settings, 10_000, null)).toBe(0);
  });
});
