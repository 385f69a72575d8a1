import { describe, expect, it } from 'vitest';
import { formatWait } from './wait.js';

describe('formatWait', () => {
  it.each([
    [1, '1 s'],
    [29, '29 s'],
    [119, '119 s'],
    [120, '2 min'],
    [121, '3 min'],
    [7_199, '120 min'],
    [7_200, '2 h'],
    [86_100, '24 h'],
  ])('shows %i seconds as %s', (seconds, shown) => {
    expect(formatWait(seconds)).toBe(shown);
  });
});
