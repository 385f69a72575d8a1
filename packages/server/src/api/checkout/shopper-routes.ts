import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Checkout } from '../../checkout/index.js';
import { closeRoute } from './close.js';
import { enrolRoute } from './enrol.js';
import { orderSummaryRoute } from './orders.summary.js';
import { otpRoutes } from './otp.js';
import { payRoute } from './pay.js';
import { quoteRoute } from './quote.js';
import { walletRoutes } from './wallet.js';

/** The checkout page's API (docs/internals/checkout-protocol.md part 3): same origin, shopper token. */
export function checkoutApiRoutes(deps: { checkout: Checkout }): FastifyPluginAsyncTypebox[] {
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
