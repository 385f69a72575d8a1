import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimits } from '../../rate-limits.js';
import { engines, openTestDb } from '../../test-support/db.js';
import { LookupLimiter } from './shoppers.rate-limit.js';

describe.each(engines())('LookupLimiter on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => {
    handle = await openTestDb(engine);
  });
  afterAll(() => handle.close());

  it('refuses with RATE_LIMITED and the seconds to wait, per client and per merchant', async () => {
    const limiter = new LookupLimiter(new RateLimits(handle.db, () => 0), {
      perClient: 1,
      perMerchant: 2,
      windowMs: 60_000,
    });
    await limiter.checkClient('203.0.113.7');
    await expect(limiter.checkClient('203.0.113.7')).rejects.toThrow(
      expect.objectContaining({
        errorCode: 'RATE_LIMITED',
        retryAfterSeconds: 60,
        message: 'Too many shopper look-ups from this address (at most 1 in 60 s); retry in 60 s.',
      }),
    );
    await limiter.checkClient('203.0.113.8');
    await limiter.checkMerchant('mch_1');
    await limiter.checkMerchant('mch_1');
    await expect(limiter.checkMerchant('mch_1')).rejects.toThrow(
      /^Too many shopper look-ups for merchant mch_1/,
    );
    await expect(limiter.checkMerchant('mch_2')).resolves.toBeUndefined();
  });
});
