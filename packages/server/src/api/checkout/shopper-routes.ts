import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Checkout } from '../../checkout/index.js';
import type { RateLimits } from '../../rate-limits.js';
import type { ShopperAuth } from '../../shopper-auth/index.js';
import { closeRoute } from './close.js';
import { enrolRoute } from './enrol.js';
import { orderSummaryRoute } from './orders.summary.js';
import { otpRoutes } from './otp.js';
import { payRoute } from './pay.js';
import { quoteRoute } from './quote.js';
import { walletRoutes } from './wallet.js';

/** The checkout page's API (docs/internals/checkout-protocol.md part 3): same origin, shopper token. */
export function checkoutApiRoutes(deps: {
  checkout: Checkout;
  shopperAuth: ShopperAuth;
  rateLimits: RateLimits;
}): FastifyPluginAsyncTypebox[] {
  return [
    orderSummaryRoute(deps),
    otpRoutes(deps),
    enrolRoute(deps),
    walletRoutes(deps),
    quoteRoute(deps),
    payRoute(deps),
    closeRoute(deps),
  ];
}
