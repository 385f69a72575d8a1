import { describe, expect, it } from 'vitest';
import { REFUSAL_LOG_INTERVAL_MS, RefusalLog } from './errors.js';

describe('RefusalLog, on a fake clock', () => {
  const refused = (code: string) => Object.assign(new Error('connect failed'), { code });

  it('logs the first refusal, then one a period for the same failure, counting those left out', () => {
    let now = 1_000;
    const log = new RefusalLog(() => now);
    expect(log.next(refused('ECONNREFUSED'))).toBe(0);
    for (let i = 0; i < 2_500; i++) expect(log.next(refused('ECONNREFUSED'))).toBeUndefined();
    now += REFUSAL_LOG_INTERVAL_MS - 1;
    expect(log.next(refused('ECONNREFUSED'))).toBeUndefined();
    now += 1;
    expect(log.next(refused('ECONNREFUSED'))).toBe(2_501);
    expect(log.next(refused('ECONNREFUSED'))).toBeUndefined();
  });

  it('logs a failure of another kind at once: another code, or another message where there is none', () => {
    const log = new RefusalLog(() => 0);
    expect(log.next(refused('ECONNREFUSED'))).toBe(0);
    expect(log.next(refused('ECONNREFUSED'))).toBeUndefined();
    expect(log.next(refused('57P01'))).toBe(1);
    expect(log.next(new Error('Connection terminated unexpectedly'))).toBe(0);
    expect(log.next(new Error('timeout exceeded when trying to connect'))).toBe(0);
    expect(log.next(new Error('timeout exceeded when trying to connect'))).toBeUndefined();
  });
});
