import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { Merchant } from '../../merchants/types.js';
import type { Orders } from '../../orders/index.js';
import { clientKey, type RateLimits } from '../../rate-limits.js';
import { errorResponses } from '../schemas.js';
import { allowCrossOrigin, merchantForOrigin } from './cross-origin.js';

export const CreateOrderBody = Type.Object({
  merchantId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'The merchant the SDK was loaded for.',
  }),
  order: Type.Unknown({
    description:
      "The order input of interface section 2.6, amounts in integer cents: `lineItems` (required, may be empty; every item needs `SKU`), `subtotal`, `total`, `orderId` (the merchant's own id), `orderDescription`, `currencyCode` (USD). Checked with the same rules and messages as the SDK.",
    examples: [
      {
        lineItems: [{ SKU: 'TEE-M', name: 'T-shirt', amount: 2500, category: 'apparel' }],
        subtotal: 2500,
        total: 2500,
        orderId: 'order-1001',
        currencyCode: 'USD',
      },
    ],
  }),
});
export type CreateOrderBody = Static<typeof CreateOrderBody>;

const CreatedOrder = Type.Object({
  orderId: Type.String({ description: "The service's order id (`ord_…`), not the merchant's." }),
});

/**
 * 120 orders a minute per client address (IPv6: per /64). Anyone can create orders, with any `Origin`
 * outside a browser: this holds one address to two a second. A shopper makes one per press of the
 * button, and a shared address (an office, a mobile carrier's NAT) keeps room. There is no limit per
 * merchant, which would let one address stop a shop's checkout for everyone.
 */
export const ORDER_LIMITS = { perClient: 120, windowMs: 60_000 };

/** `actions.createOrder` in the SDK: a CREATED order that remembers the page's origin. */
export const createOrderRoute =
  (deps: {
    merchants: { get(id: string): Promise<Merchant | undefined> };
    orders: Orders;
    rateLimits: Pick<RateLimits, 'enforce'>;
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    allowCrossOrigin(app, '/checkout/orders');
    app.post(
      '/checkout/orders',
      {
        schema: {
          tags: ['Browser SDK'],
          operationId: 'createOrder',
          summary: 'Create an order (called by the SDK from the merchant page)',
          description: `No API key: the merchant is named by \`merchantId\` and the request's \`Origin\` must be one of its allowed origins, else 403 \`ORIGIN_NOT_ALLOWED\` and nothing is created. CORS answers carry \`Access-Control-Allow-Origin: <origin>\`. At most ${ORDER_LIMITS.perClient} orders per client address (IPv6: per /64) in ${ORDER_LIMITS.windowMs / 1000} s, counted before the merchant and origin are checked: then \`429 RATE_LIMITED\` with \`Retry-After\`.`,
          body: CreateOrderBody,
          response: {
            201: CreatedOrder,
            ...errorResponses([
              'VALIDATION_ERROR',
              'INVALID_JSON',
              'UNSUPPORTED_CURRENCY',
              'UNSUPPORTED_MEDIA_TYPE',
              'PAYLOAD_TOO_LARGE',
              'ORIGIN_NOT_ALLOWED',
              'RATE_LIMITED',
            ]),
          },
        },
      },
      async (request, reply) => {
        const { perClient, windowMs } = ORDER_LIMITS;
        await deps.rateLimits.enforce(
          `orders:client:${clientKey(request.ip)}`,
          perClient,
          windowMs,
          (wait) =>
            `Too many orders from this address (at most ${perClient} in ${windowMs / 1000} s); retry in ${wait} s.`,
        );
        const { merchant, origin } = await merchantForOrigin(
          deps.merchants,
          request.body.merchantId,
          request.headers.origin,
        );
        const order = await deps.orders.create(merchant, request.body.order, origin);
        return reply.status(201).send({ orderId: order.id });
      },
    );
  };
