import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import { errorResponses } from '../schemas.js';
import { CHECKOUT_TAG, OrderParams } from './shopper-api.js';

/** The shopper closed the modal: the order is ABANDONED. No token: the shopper may not have signed in. */
export const closeRoute =
  (deps: { checkout: Checkout }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/checkout/api/orders/:orderId/close',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'abandonOrder',
          summary: 'Abandon the order (the shopper closed the checkout)',
          description:
            'Closing an abandoned order again answers the same; a paid, failed or paying order is 409.',
          params: OrderParams,
          response: {
            200: Type.Object({ orderId: Type.String(), status: Type.Literal('ABANDONED') }),
            ...errorResponses(['VALIDATION_ERROR', 'ORDER_NOT_FOUND', 'ORDER_STATE_CONFLICT']),
          },
        },
      },
      async (request) => deps.checkout.close(request.params.orderId),
    );
  };
