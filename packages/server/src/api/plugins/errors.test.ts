import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { REFUSAL_LOG_INTERVAL_MS, RefusalLog } from './errors.js';

describe('RefusalLog, on fake timers', () => {
  let lines: Array<{ details: Record<string, unknown>; message: string }>;
  const logger = {
    error: (details: object, message: string) =>
      lines.push({ details: details as Record<string, unknown>, message }),
  };
  const coded = (code: string, cause?: unknown) =>
    Object.assign(new Error(`failed: ${code}`), { code, cause });
  const full = () => lines.filter((line) => line.details.err !== undefined);
  const summaries = () => lines.filter((line) => line.details.err === undefined).map((line) => line.details);

  beforeEach(() => {
    lines = [];
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('logs the first refusal of a kind in full, then how many more came in the interval', () => {
    const refusals = new RefusalLog(logger);
    for (let i = 0; i < 2_501; i++) refusals.refused(coded('ECONNREFUSED'), logger);
    expect(full()).toHaveLength(1);
    expect(full()[0]?.message).toBe('the database could not be reached; answered 503');
    vi.advanceTimersByTime(REFUSAL_LOG_INTERVAL_MS - 1);
    expect(summaries()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(summaries()).toEqual([{ failure: 'ECONNREFUSED', refusedUnlogged: 2_500 }]);
    // The next interval starts with a full line again.
    refusals.refused(coded('ECONNREFUSED'), logger);
    expect(full()).toHaveLength(2);
  });

  it('counts each kind apart, interleaved, and tells kinds apart by their causes', () => {
    const refusals = new RefusalLog(logger);
    const timedOut = (cause: string) =>
      Object.assign(new Error('Connection terminated due to connection timeout'), {
        cause: coded(cause),
      });
    for (let i = 0; i < 500; i++) {
      refusals.refused(coded('ECONNREFUSED'), logger);
      refusals.refused(coded('57P01'), logger);
      refusals.refused(timedOut('ETIMEDOUT'), logger);
    }
    refusals.refused(timedOut('ENOTFOUND'), logger);
    expect(full()).toHaveLength(4);
    vi.advanceTimersByTime(REFUSAL_LOG_INTERVAL_MS);
    expect(summaries()).toEqual([
      { failure: 'ECONNREFUSED', refusedUnlogged: 499 },
      { failure: '57P01', refusedUnlogged: 499 },
      { failure: 'Connection terminated due to connection timeout < ETIMEDOUT', refusedUnlogged: 499 },
    ]);
  });

  it('logs the counts still open when flushed, as the service stops, and nothing after', () => {
    const refusals = new RefusalLog(logger);
    refusals.refused(coded('SQLITE_BUSY'), logger);
    refusals.refused(coded('SQLITE_BUSY'), logger);
    refusals.flush();
    expect(summaries()).toEqual([{ failure: 'SQLITE_BUSY', refusedUnlogged: 1 }]);
    vi.advanceTimersByTime(REFUSAL_LOG_INTERVAL_MS);
    expect(lines).toHaveLength(2);
  });
});
