import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GroupCommit } from './group-commit.js';
import { createDb, type Db } from './index.js';

/** Items the writer fails the whole batch for: an error of its own, and the database being locked. */
const POISON = 1_000;
const LOCKED = 2_000;

/** Lets real I/O and immediates run while the faked clock stands still. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit (fake clock; a real in-memory SQLite transaction per batch)', () => {
  let db: Db;
  let batches: number[];
  let group: GroupCommit<number>;

  beforeAll(() => {
    db = createDb('sqlite::memory:');
  });
  afterAll(() => db.close());
  afterEach(() => vi.useRealTimers());

  async function started(): Promise<void> {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    batches = [];
    group = new GroupCommit(db, async (_trx, items) => {
      batches.push(items.length);
      if (items.includes(POISON)) throw new Error('the batch failed');
      if (items.includes(LOCKED))
        throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
      return items.map((item) => (item < 0 ? new Error(`item ${item} refused`) : undefined));
    });
    await group.submit(0);
  }

  it('gathers what arrives within 3 ms of the last commit into one batch', async () => {
    await started();
    const submitted = [1, 2, 3].map((item) => group.submit(item));
    await settle();
    expect(batches).toEqual([1]);
    await vi.advanceTimersByTimeAsync(3);
    await Promise.all(submitted);
    expect(batches).toEqual([1, 3]);
  });

  it('starts a batch of 16 at once instead of waiting out the interval', async () => {
    await started();
    const submitted = Array.from({ length: 15 }, (_, i) => group.submit(i + 1));
    await settle();
    expect(batches).toEqual([1]);
    submitted.push(group.submit(16));
    await Promise.all(submitted);
    expect(batches).toEqual([1, 16]);
    expect(performance.now()).toBeLessThan(3);
  });

  it('rejects only the items the writer refuses, and commits the rest', async () => {
    await started();
    const outcomes = Promise.allSettled([5, -1, 6].map((item) => group.submit(item)));
    await vi.advanceTimersByTimeAsync(3);
    expect((await outcomes).map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(batches).toEqual([1, 3]);
  });

  it('tries each item of a batch that failed alone, so only the bad one fails', async () => {
    await started();
    const outcomes = Promise.allSettled([7, POISON, 8].map((item) => group.submit(item)));
    await vi.advanceTimersByTimeAsync(3);
    expect((await outcomes).map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(batches).toEqual([1, 3, 1, 1, 1]);
  });

  it('fails a whole batch at once when the database could not be used, without trying each alone', async () => {
    await started();
    const outcomes = Promise.allSettled([9, LOCKED, 10].map((item) => group.submit(item)));
    await vi.advanceTimersByTimeAsync(3);
    expect((await outcomes).map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(batches).toEqual([1, 3]);
  });
});
