import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Merchant } from '../../merchants/types.js';
import type { RateLimits } from '../../rate-limits.js';
import type { Shopper } from '../../wallet/index.js';
import { errorResponses } from '../schemas.js';
import { allowCrossOrigin, merchantForOrigin } from './cross-origin.js';
import { DEFAULT_LOOKUP_LIMITS, LookupLimiter, type LookupLimits } from './shoppers.rate-limit.js';

/** `guestRedirect(email)` in the SDK: does this email have a wallet? Answered to allowed origins only. */
export const shopperLookupRoute =
  (deps: {
    merchants: { get(id: string): Promise<Merchant | undefined> };
    wallet: { findShopperByEmail(email: string): Promise<Shopper | undefined> };
    rateLimits: RateLimits;
    lookupLimits?: LookupLimits;
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const limits = deps.lookupLimits ?? DEFAULT_LOOKUP_LIMITS;
    const limiter = new LookupLimiter(deps.rateLimits, limits);
    allowCrossOrigin(app, '/checkout/shoppers/lookup');
    app.post(
      '/checkout/shoppers/lookup',
      {
        schema: {
          tags: ['Browser SDK'],
          operationId: 'lookUpShopper',
          summary: 'Tell whether an email has a wallet (called by the SDK from the merchant page)',
          description: [
            "No API key: the request's `Origin` must be one of the merchant's allowed origins, else 403 `ORIGIN_NOT_ALLOWED`.",
            `Rate-limited, because the answer tells whether an email has a wallet: at most ${limits.perClient} look-ups per client address (IPv6: per /64) and ${limits.perMerchant} per merchant in ${limits.windowMs / 1000} s.`,
            'Over a limit the answer is 429 `RATE_LIMITED` with `Retry-After` in seconds. The counts are shared by every process of the service.',
          ].join(' '),
          body: Type.Object({
            merchantId: Type.String({ minLength: 1, maxLength: 64 }),
            email: Type.String({
              maxLength: 254,
              pattern: '^[^@\\s]+@[^@\\s]+$',
              description: 'An e-mail address.',
            }),
          }),
          response: {
            200: Type.Object({ known: Type.Boolean({ description: 'True when the email has a wallet.' }) }),
            ...errorResponses([
              'VALIDATION_ERROR',
              'INVALID_JSON',
              'UNSUPPORTED_MEDIA_TYPE',
              'PAYLOAD_TOO_LARGE',
              'ORIGIN_NOT_ALLOWED',
              'RATE_LIMITED',
            ]),
          },
        },
      },
      async (request) => {
        await limiter.checkClient(request.ip);
        const { merchant } = await merchantForOrigin(
          deps.merchants,
          request.body.merchantId,
          request.headers.origin,
        );
        // Counted once the origin is allowed, so requests naming made-up merchants store no counter.
        await limiter.checkMerchant(merchant.id);
        return { known: (await deps.wallet.findShopperByEmail(request.body.email)) !== undefined };
      },
    );
  };
