import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextDelayMs } from './schedule.js';

describe('retry schedule', () => {
  it('keeps every delay within ±20 % of the schedule', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 36_000_000 }), { minLength: 1, maxLength: 10 }),
        fc.nat(),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (delays, pick, random) => {
          const attemptsMade = (pick % delays.length) + 1;
          const base = delays[attemptsMade - 1] as number;
          const delay = nextDelayMs(delays, attemptsMade, () => random) as number;
          expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.8));
          expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.2));
        },
      ),
    );
  });

  it('reaches both ends of the jitter', () => {
    expect(nextDelayMs([1000], 1, () => 0)).toBe(800);
    expect(nextDelayMs([1000], 1, () => 0.999_999)).toBe(1200);
    expect(nextDelayMs([1000], 1, () => 0.5)).toBe(1000);
  });

  it('uses the delay of the attempt that just failed and is exhausted after the last one', () => {
    const delays = [100, 200, 300];
    expect(nextDelayMs(delays, 1, () => 0.5)).toBe(100);
    expect(nextDelayMs(delays, 3, () => 0.5)).toBe(300);
    expect(nextDelayMs(delays, 4)).toBeUndefined();
    expect(nextDelayMs([], 1)).toBeUndefined();
    expect(nextDelayMs(delays, 0)).toBeUndefined();
  });
});
