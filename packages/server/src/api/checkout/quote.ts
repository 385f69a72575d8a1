import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import { errorResponses } from '../schemas.js';
import { ShippingChoice } from './pay.js';
import { CHECKOUT_TAG, OrderParams, SHOPPER_SECURITY, shopperTokenOf } from './shopper-api.js';

const Cents = Type.Integer({ description: 'Integer cents.' });

export const QuoteAnswer = Type.Object({
  currency: Type.String(),
  subtotal: Cents,
  shipping: Cents,
  taxes: Cents,
  total: Cents,
});

/** The amounts for the choices made so far, for the summary and the "Pay $…" button. */
export const quoteRoute =
  (deps: { checkout: Checkout }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/checkout/api/orders/:orderId/quote',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'quoteOrder',
          summary: 'Subtotal, shipping, taxes and total for the current choices',
          description:
            "Taxes follow the shipping address's state, else the billing address of `paymentId`'s card; 0 until one is known.",
          security: SHOPPER_SECURITY,
          params: OrderParams,
          body: Type.Object({
            ...ShippingChoice,
            paymentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          }),
          response: {
            200: QuoteAnswer,
            ...errorResponses([
              'VALIDATION_ERROR',
              'SHOPPER_UNAUTHORIZED',
              'ORDER_NOT_FOUND',
              'ADDRESS_NOT_FOUND',
              'ORDER_STATE_CONFLICT',
            ]),
          },
        },
      },
      async (request) => {
        const { orderId } = request.params;
        const shopperId = await deps.checkout.authenticate(shopperTokenOf(request), orderId);
        return deps.checkout.quote(shopperId, orderId, request.body);
      },
    );
  };
