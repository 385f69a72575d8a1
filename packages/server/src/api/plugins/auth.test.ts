import { describe, expect, it } from 'vitest';
import { RefusalLog } from './auth.js';

describe('RefusalLog, with the clock faked', () => {
  it('logs 20 refusals a second, then says how many it left out', () => {
    let clock = 1_700_000_000_000;
    const refusals = new RefusalLog(() => clock);
    const taken = Array.from({ length: 25 }, () => refusals.take());
    expect(taken.slice(0, 20)).toEqual(Array(20).fill(0));
    expect(taken.slice(20)).toEqual(Array(5).fill(undefined));
    clock += 999;
    expect(refusals.take()).toBeUndefined();
    clock += 1;
    expect(refusals.take()).toBe(6);
    expect(refusals.take()).toBe(0);
  });
});
