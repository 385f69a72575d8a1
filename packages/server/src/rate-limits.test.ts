import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientKey, RateLimits } from './rate-limits.js';
import { engines, openTestDb } from './test-support/db.js';

describe.each(engines())('RateLimits on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let now = 1_000_000;
  beforeAll(async () => {
    handle = await openTestDb(engine);
  });
  afterAll(() => handle.close());

  it('lets `limit` hits through per window, then says how many seconds are left', async () => {
    const limits = new RateLimits(handle.db, () => now);
    expect(await limits.hit('a', 2, 60_000)).toBeUndefined();
    now += 10_000;
    expect(await limits.hit('a', 2, 60_000)).toBeUndefined();
    expect(await limits.hit('a', 2, 60_000)).toBe(50);
    expect(await limits.hit('b', 2, 60_000)).toBeUndefined();
    now += 49_500;
    expect(await limits.hit('a', 2, 60_000)).toBe(1);
    now += 500;
    expect(await limits.hit('a', 2, 60_000)).toBeUndefined();
  });

  it('counts the hits of several processes together, each one once', async () => {
    // Two instances on one database stand for two processes of the service.
    const processes = [new RateLimits(handle.db, () => now), new RateLimits(handle.db, () => now)];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) => (processes[n % 2] as RateLimits).hit('shared', 10, 60_000)),
    );
    expect(answers.filter((wait) => wait === undefined)).toHaveLength(10);
    expect(answers.filter((wait) => wait === 60)).toHaveLength(10);
  });

  it('takes back a hit given back, never below none', async () => {
    const limits = new RateLimits(handle.db, () => now);
    expect(await limits.hit('back', 1, 60_000)).toBeUndefined();
    await limits.giveBack('back');
    expect(await limits.hit('back', 1, 60_000)).toBeUndefined();
    expect(await limits.hit('back', 1, 60_000)).toBe(60);
    await limits.giveBack('never-hit');
    await limits.giveBack('back');
    await limits.giveBack('back');
    await limits.giveBack('back');
    expect(await limits.hit('back', 1, 60_000)).toBeUndefined();
    expect(await limits.hit('back', 1, 60_000)).toBe(60);
  });

  it('forgets every key under a prefix, literally, and no other', async () => {
    const limits = new RateLimits(handle.db, () => now);
    const keys = ['p:a_%😀@x y', 'p:a_%😀@x z', 'p:a_%😀@xy', 'p:ab%😀@x y', 'p:a_%😀@x'];
    for (const key of keys) await limits.hit(key, 5, 60_000);
    await limits.forgetPrefix('p:a_%😀@x ');
    const left = await handle.db.kysely
      .selectFrom('rate_limit_windows')
      .select('key')
      .where('key', 'in', keys)
      .execute();
    expect(left.map((row) => row.key).sort()).toEqual(['p:a_%😀@x', 'p:a_%😀@xy', 'p:ab%😀@x y']);
  });

  it('sweeps the windows that have ended, and only those', async () => {
    const limits = new RateLimits(handle.db, () => now);
    await limits.hit('ended', 5, 1_000);
    await limits.hit('running', 5, 60_000);
    now += 1_000;
    await limits.sweep();
    const keys = await handle.db.kysely.selectFrom('rate_limit_windows').select('key').execute();
    expect(keys.map((row) => row.key)).toContain('running');
    expect(keys.map((row) => row.key)).not.toContain('ended');
  });
});

describe('clientKey', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:85a3:7:8a2e:370:7334:1', '2001:db8:85a3:7::/64'],
    ['2001:0DB8:85a3:0007:ffff::2', '2001:db8:85a3:7::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['203.0.113.7:4431', '203.0.113.7'],
    ['[2001:db8::1]:4431', '2001:db8:0:0::/64'],
    ['[2001:db8::1]', '2001:db8:0:0::/64'],
    ['::ffff:203.0.113.7:4431', 'unreadable'],
    ['0203.0.113.7', 'unreadable'],
    ['203.0.113.7.1', 'unreadable'],
    ['shop.example', 'unreadable'],
    ['', 'unreadable'],
  ])('counts %j as %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });
});
