import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FAILURE_LOG_INTERVAL_MS, FailureLog } from './failure-log.js';

const UNREACHABLE = 'the database could not be reached; answered 503';

describe('FailureLog, on fake timers', () => {
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

  it('logs the first failure of a kind in full, then how many more came in the interval', () => {
    const failures = new FailureLog(logger);
    for (let i = 0; i < 2_501; i++) failures.failed(coded('ECONNREFUSED'), UNREACHABLE);
    expect(full()).toHaveLength(1);
    expect(full()[0]?.message).toBe(UNREACHABLE);
    vi.advanceTimersByTime(FAILURE_LOG_INTERVAL_MS - 1);
    expect(summaries()).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(summaries()).toEqual([{ failure: 'ECONNREFUSED', repeated: 2_500 }]);
    expect(lines.at(-1)?.message).toBe(`${UNREACHABLE}: more of the same`);
    // The next interval starts with a full line again.
    failures.failed(coded('ECONNREFUSED'), UNREACHABLE);
    expect(full()).toHaveLength(2);
  });

  it('counts each kind apart, interleaved, and tells kinds apart by their causes', () => {
    const failures = new FailureLog(logger);
    const timedOut = (cause: string) =>
      Object.assign(new Error('Connection terminated due to connection timeout'), {
        cause: coded(cause),
      });
    for (let i = 0; i < 500; i++) {
      failures.failed(coded('ECONNREFUSED'), UNREACHABLE);
      failures.failed(coded('57P01'), UNREACHABLE);
      failures.failed(timedOut('ETIMEDOUT'), UNREACHABLE);
    }
    failures.failed(timedOut('ENOTFOUND'), UNREACHABLE);
    expect(full()).toHaveLength(4);
    vi.advanceTimersByTime(FAILURE_LOG_INTERVAL_MS);
    expect(summaries()).toEqual([
      { failure: 'ECONNREFUSED', repeated: 499 },
      { failure: '57P01', repeated: 499 },
      { failure: 'Connection terminated due to connection timeout < ETIMEDOUT', repeated: 499 },
    ]);
  });

  it('logs the counts still open when flushed, as the service stops, and nothing after', () => {
    const failures = new FailureLog(logger);
    failures.failed(coded('SQLITE_BUSY'), UNREACHABLE);
    failures.failed(coded('SQLITE_BUSY'), UNREACHABLE);
    failures.flush();
    expect(summaries()).toEqual([{ failure: 'SQLITE_BUSY', repeated: 1 }]);
    vi.advanceTimersByTime(FAILURE_LOG_INTERVAL_MS);
    expect(lines).toHaveLength(2);
  });

  it('counts a kind under each message apart, and logs a full line where the caller says', () => {
    const failures = new FailureLog(logger);
    const elsewhere: string[] = [];
    const requestLog = { error: (_details: object, message: string) => elsewhere.push(message) };
    for (let i = 0; i < 3; i++) {
      failures.failed(coded('SQLITE_BUSY'), 'could not claim due webhook messages', { batch: i });
      failures.failed(coded('SQLITE_BUSY'), UNREACHABLE, {}, requestLog);
    }
    expect(full().map((line) => [line.message, line.details.batch])).toEqual([
      ['could not claim due webhook messages', 0],
    ]);
    expect(elsewhere).toEqual([UNREACHABLE]);
    failures.flush();
    expect(lines.filter((line) => line.details.err === undefined).map((line) => line.message)).toEqual([
      'could not claim due webhook messages: more of the same',
      `${UNREACHABLE}: more of the same`,
    ]);
  });
});
