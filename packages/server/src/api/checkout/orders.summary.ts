import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import { AUTHORIZATION_MODES, VARIANTS } from '../../merchants/index.js';
import { ORDER_STATES } from '../../orders/index.js';
import { errorResponses, literals } from '../schemas.js';
import { CHECKOUT_TAG, OrderParams, ShippingMethod } from './shopper-api.js';

export const OrderSummary = Type.Object({
  orderId: Type.String(),
  status: literals(ORDER_STATES),
  merchantName: Type.String(),
  variant: literals(VARIANTS),
  authorizationMode: literals(AUTHORIZATION_MODES),
  currency: Type.String(),
  lineItems: Type.Array(
    Type.Object({
      SKU: Type.String(),
      name: Type.Optional(Type.String()),
      amount: Type.Optional(Type.Integer()),
      category: Type.Optional(Type.String()),
    }),
  ),
  subtotal: Type.Integer({ description: 'Integer cents.' }),
  description: Type.Union([Type.String(), Type.Null()]),
  shippingMethods: Type.Array(ShippingMethod, { description: 'Empty when the merchant does not ship.' }),
  expiresAt: Type.String({ format: 'date-time' }),
  rememberDeviceDays: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'Days "Remember me on this device" signs the shopper in without a code (`REMEMBER_DEVICE_DAYS`); null: the service or this merchant remembers no device (`REMEMBER_DEVICE_DAYS=off`, or the merchant\'s `--remember-devices off`), and the page does not offer it.',
  }),
});

/** The order as the checkout page shows it; no token needed (the page is opened with the order id). */
export const orderSummaryRoute =
  (deps: { checkout: Checkout }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/checkout/api/orders/:orderId',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'getOrderSummary',
          summary: 'Order summary for the checkout page',
          params: OrderParams,
          response: { 200: OrderSummary, ...errorResponses(['VALIDATION_ERROR', 'ORDER_NOT_FOUND']) },
        },
      },
      async (request) => deps.checkout.summary(request.params.orderId),
    );
  };
