import { describe, expect, it } from 'vitest';
import { clientKey, FixedWindowCounter, LookupLimiter } from './shoppers.rate-limit.js';

describe('FixedWindowCounter', () => {
  it('lets `limit` hits through per window, then says how many seconds are left', () => {
    let now = 1_000_000;
    const counter = new FixedWindowCounter(2, 60_000, () => now);
    expect(counter.hit('a')).toBeUndefined();
    now += 10_000;
    expect(counter.hit('a')).toBeUndefined();
    expect(counter.hit('a')).toBe(50);
    expect(counter.hit('b')).toBeUndefined();
    now += 49_500;
    expect(counter.hit('a')).toBe(1);
    now += 500;
    expect(counter.hit('a')).toBeUndefined();
  });
});

describe('LookupLimiter', () => {
  it('refuses with RATE_LIMITED and the seconds to wait, per client and per merchant', () => {
    const limiter = new LookupLimiter({ perClient: 1, perMerchant: 2, windowMs: 60_000 }, () => 0);
    limiter.checkClient('203.0.113.7');
    expect(() => limiter.checkClient('203.0.113.7')).toThrow(
      expect.objectContaining({
        errorCode: 'RATE_LIMITED',
        retryAfterSeconds: 60,
        message: 'Too many shopper look-ups from this address (at most 1 in 60 s); retry in 60 s.',
      }),
    );
    limiter.checkClient('203.0.113.8');
    limiter.checkMerchant('mch_1');
    limiter.checkMerchant('mch_1');
    expect(() => limiter.checkMerchant('mch_1')).toThrow(/^Too many shopper look-ups for merchant mch_1/);
    expect(() => limiter.checkMerchant('mch_2')).not.toThrow();
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
  ])('counts %s as %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });
});
