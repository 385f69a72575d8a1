import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { Merchant } from '../../merchants/types.js';
import type { Orders } from '../../orders/index.js';
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

/** `actions.createOrder` in the SDK: a CREATED order that remembers the page's origin. */
export const createOrderRoute =
  (deps: {
    merchants: { get(id: string): Promise<Merchant | undefined> };
    orders: Orders;
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    allowCrossOrigin(app, '/checkout/orders');
    app.post(
      '/checkout/orders',
      {
        schema: {
          tags: ['Browser SDK'],
          summary: 'Create an order (called by the SDK from the merchant page)',
          description:
            "No API key: the merchant is named by `merchantId` and the request's `Origin` must be one of its allowed origins, else 403 `ORIGIN_NOT_ALLOWED` and nothing is created. CORS answers carry `Access-Control-Allow-Origin: <origin>`.",
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
            ]),
          },
        },
      },
      async (request, reply) => {
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
