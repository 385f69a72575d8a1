import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ORDER_STATES, type Orders, toOrderView } from '../../orders/index.js';
import { merchantOf } from '../plugins/auth.js';
import {
  BEARER_SECURITY,
  CreatedWindow,
  createdWindow,
  errorResponses,
  ListQuery,
  Page,
  StartingAfter,
  Timestamp,
} from '../schemas.js';

const Cents = Type.Integer({ description: 'Integer cents.' });
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const ShippingMethod = Type.Object({ externalId: Type.String(), name: Type.String(), price: Cents });

export const OrderResource = Type.Object({
  orderId: Type.String({ description: "The service's order id (`ord_…`)." }),
  merchantOrderId: nullable(
    Type.String({ description: 'The `orderId` the merchant gave to `createOrder`.' }),
  ),
  status: Type.Union(
    ORDER_STATES.map((state) => Type.Literal(state)),
    {
      description:
        "CREATED → PROCESSING → SUCCEEDED | FAILED; CREATED → ABANDONED (closed or expired). In the `merchant` authorization mode the shopper's selection moves the order to PROCESSING (it no longer expires) and it stays there: the merchant's processor decides the payment, and `merchantAuthorization.externalResponse` shows that the merchant reported its answer.",
    },
  ),
  currency: Type.String(),
  lineItems: Type.Array(
    Type.Object({
      SKU: Type.String(),
      name: Type.Optional(Type.String()),
      amount: Type.Optional(Cents),
      category: Type.Optional(Type.String()),
    }),
  ),
  subtotal: Cents,
  total: Type.Integer({
    description:
      "Integer cents: the merchant's total (or the subtotal) until the shopper pays; from then on subtotal + shipping + taxes as submitted to the gateway.",
  }),
  description: nullable(Type.String()),
  email: nullable(Type.String({ description: "The shopper's email, once the shopper has paid." })),
  shipping: nullable(
    Type.Object({
      addressId: nullable(Type.String({ description: 'The shipping address `externalId`.' })),
      method: nullable(ShippingMethod),
      amount: Cents,
    }),
  ),
  taxes: nullable(Cents),
  transactionDetails: nullable(
    Type.Object(
      {
        networkTransactionId: nullable(Type.String()),
        gatewayTransactionId: Type.String(),
        gatewayResponse: Type.Unknown({
          description: "The gateway's response: an object or an XML/JSON string.",
        }),
        stpReferenceNum: Type.Optional(Type.String({ description: 'Connected checkout variant only.' })),
      },
      { description: 'Interface section 2.11; null until the order SUCCEEDED.' },
    ),
  ),
  error: nullable(
    Type.Object(
      { errorCode: Type.String(), errorMessage: nullable(Type.String()) },
      { description: 'Set when the order FAILED: `990`, `995` or `-1` (with a null message).' },
    ),
  ),
  merchantAuthorization: nullable(
    Type.Object(
      {
        sessionId: Type.String({
          description: 'The payment-carousel session handed to `onPaymentSelected` with the selection.',
        }),
        paymentId: Type.String({ description: 'The payment method the shopper selected.' }),
        externalResponse: nullable(
          Type.Object(
            {
              externalResponseId: Type.String(),
              pspHostName: Type.String(),
              amount: Cents,
              currency: Type.String(),
              isRecurring: Type.Boolean(),
              reportedAt: Timestamp,
            },
            {
              description:
                "The latest `POST /payments/externalresponse` for this session's credentials request and payment method (the raw response is not repeated here); null until the merchant reports one.",
            },
          ),
        ),
      },
      {
        description:
          "Additive. Set when the merchant's account is in the `merchant` authorization mode and the shopper selected a card: the merchant runs the credentials flow with this `sessionId` and `paymentId`. Null in the default flow.",
      },
    ),
  ),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type OrderResource = Static<typeof OrderResource>;

/** `GET /orders/{orderId}`, and `GET /orders` for a page of them. */
export const orderGetRoute =
  (orders: Orders): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/orders',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Orders'],
          operationId: 'listOrders',
          summary: 'List orders',
          description:
            "Your orders, newest first (by creation time, then id), as `GET /orders/{orderId}` answers each: to reconcile what your server recorded with what the service did. Narrow them by `status`, by your own `merchantOrderId`, or by when they were created. For the next page, pass the last order's `orderId` as `startingAfter`, with the same filters, while `hasMore` is true. ABANDONED orders leave the list once the service's retention (30 days by default) has passed since their `expiresAt`; paid, failed and paying orders are kept.",
          security: BEARER_SECURITY,
          querystring: ListQuery({
            status: Type.Optional(Type.Union(ORDER_STATES.map((state) => Type.Literal(state)))),
            merchantOrderId: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 128,
                description: 'The `orderId` you gave to `createOrder`.',
              }),
            ),
            ...CreatedWindow,
            startingAfter: StartingAfter(
              'An `orderId`, usually the last of the previous page: lists the orders after it (older). 404 ORDER_NOT_FOUND when it is not one of yours.',
            ),
          }),
          response: {
            200: Page(OrderResource, 'orders'),
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR', 'ORDER_NOT_FOUND']),
          },
        },
      },
      async (request) => {
        const { createdSince, createdBefore, limit = 20, ...rest } = request.query;
        const page = await orders.list(merchantOf(request).id, {
          ...rest,
          limit,
          ...createdWindow({ createdSince, createdBefore }),
        });
        return { data: page.data.map(toOrderView), hasMore: page.hasMore };
      },
    );

    app.get(
      '/orders/:orderId',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Orders'],
          operationId: 'getOrder',
          summary: 'Get an order',
          description:
            "The order with the merchant's own id as `merchantOrderId`, its status, amounts and transaction details. Confirm an order here (or by the signed ORDER_SUCCEEDED webhook) rather than trusting the browser. Another merchant's order is ORDER_NOT_FOUND, and so is an ABANDONED one once the service's retention (30 days by default) has passed since its `expiresAt`; paid, failed and paying orders are kept.",
          security: BEARER_SECURITY,
          params: Type.Object({ orderId: Type.String({ minLength: 1, maxLength: 64 }) }),
          response: {
            200: OrderResource,
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR', 'ORDER_NOT_FOUND']),
          },
        },
      },
      async (request): Promise<OrderResource> =>
        toOrderView(await orders.get(merchantOf(request).id, request.params.orderId)),
    );
  };
