import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_LIMITS } from './api/checkout/orders.create.js';
import { DEFAULT_LOOKUP_LIMITS, SIGN_IN_LIMITS } from './api/checkout/shoppers.rate-limit.js';
import { clientKey, RateLimits } from './rate-limits.js';
import {
  CODES_PER_DAY,
  CODES_PER_DAY_PER_CLIENT,
  MAX_ATTEMPTS,
  RESEND_GAP_MS,
} from './shopper-auth/index.js';
import { engines, openTestDb } from './test-support/db.js';
import { TESTS_PER_MINUTE } from './webhooks/index.js';

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

  it('counts the hits of a window while it lasts, and none once it ended', async () => {
    const limits = new RateLimits(handle.db, () => now);
    expect(await limits.count('counted')).toBe(0);
    await limits.hit('counted', 5, 1_000);
    await limits.hit('counted', 5, 1_000);
    expect(await limits.count('counted')).toBe(2);
    now += 1_000;
    expect(await limits.count('counted')).toBe(0);
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

describe('docs/operations.md', () => {
  it('names every rate limit and its figure in its Rate limits section', () => {
    const doc = fs.readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
    const start = doc.indexOf('## Rate limits');
    const section = doc.slice(start, doc.indexOf('\n## ', start)).replace(/\s+/g, ' ');
    // Each limit's route, then how the section words its figure.
    const limits: [string, string][] = [
      ['POST /checkout/shoppers/lookup', `| ${DEFAULT_LOOKUP_LIMITS.perClient} look-ups | 1 minute |`],
      ['POST /checkout/shoppers/lookup', `| ${DEFAULT_LOOKUP_LIMITS.perMerchant} look-ups | 1 minute |`],
      ['POST /checkout/api/orders/:orderId/otp', `${SIGN_IN_LIMITS.perClient} together per client address`],
      ['OTP_THROTTLED', `one per ${RESEND_GAP_MS / 1000} seconds`],
      ['OTP_THROTTLED', `${CODES_PER_DAY_PER_CLIENT} a day asked for from one client address`],
      ['OTP_THROTTLED', `${CODES_PER_DAY} a day in all`],
      ['OTP_LOCKED', `${MAX_ATTEMPTS} wrong tries`],
      ['POST /checkout/orders', `${ORDER_LIMITS.perClient} a minute`],
      ['POST /webhooks/test', `${TESTS_PER_MINUTE} a minute`],
    ];
    for (const [route, figure] of limits) {
      expect(section).toContain(route);
      expect(section).toContain(figure);
    }
  });
});
