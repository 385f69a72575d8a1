import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import { errorResponses } from '../schemas.js';
import { CHECKOUT_TAG, OrderParams, SHOPPER_SECURITY, shopperTokenOf } from './shopper-api.js';

const Email = Type.String({
  maxLength: 254,
  pattern: '^[^@\\s]+@[^@\\s]+$',
  description: 'An e-mail address.',
});

export const CodeRequestAnswer = Type.Union([
  Type.Object({
    status: Type.Literal('sent'),
    destination: Type.String({ description: 'The email, masked: `t***@example.com`.' }),
  }),
  Type.Object({ status: Type.Literal('enrol') }),
]);

export const ShopperTokenGrant = Type.Object({
  shopperToken: Type.String({
    description: 'Send as `Authorization: Bearer <shopperToken>`; keep in memory.',
  }),
  expiresAt: Type.String({ format: 'date-time' }),
});

/** Sign-in with a one-time code sent to the shopper's email, for one order, and sign-out. */
export const otpRoutes =
  (deps: { checkout: Checkout }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/checkout/api/orders/:orderId/otp',
      {
        schema: {
          tags: CHECKOUT_TAG,
          summary: 'Send a one-time code to a known shopper',
          description:
            'An email without a wallet gets `{ status: "enrol" }` and nothing is sent. `OTP_THROTTLED` carries `Retry-After` in seconds.',
          params: OrderParams,
          body: Type.Object({ email: Email }),
          response: {
            200: CodeRequestAnswer,
            ...errorResponses([
              'VALIDATION_ERROR',
              'ORDER_NOT_FOUND',
              'ORDER_STATE_CONFLICT',
              'OTP_THROTTLED',
              'MESSAGE_NOT_SENT',
            ]),
          },
        },
      },
      async (request) => deps.checkout.requestCode(request.params.orderId, request.body.email),
    );

    app.post(
      '/checkout/api/orders/:orderId/otp/verify',
      {
        schema: {
          tags: CHECKOUT_TAG,
          summary: 'Prove the one-time code and get a shopper token',
          description:
            'For a new shopper (after `POST …/enrol`) this also creates the wallet: shopper, billing address and card.',
          params: OrderParams,
          body: Type.Object({
            email: Email,
            code: Type.String({ pattern: '^[0-9]{6}$', description: '6 digits.' }),
          }),
          response: {
            200: ShopperTokenGrant,
            ...errorResponses([
              'VALIDATION_ERROR',
              'OTP_INVALID',
              'OTP_EXPIRED',
              'OTP_LOCKED',
              'ORDER_NOT_FOUND',
              'ORDER_STATE_CONFLICT',
              'ENROLMENT_NOT_FOUND',
              'SHOPPER_ALREADY_EXISTS',
            ]),
          },
        },
      },
      async (request) => deps.checkout.verify(request.params.orderId, request.body.email, request.body.code),
    );

    app.post(
      '/checkout/api/sign-out',
      {
        schema: {
          tags: CHECKOUT_TAG,
          summary: 'Sign the shopper out ("Not you?")',
          description:
            "The shopper token stops working at once (later calls with it answer `401 SHOPPER_UNAUTHORIZED`), rather than at its expiry. A token that already ended, or is unknown, answers the same, so a retry is safe. The shopper's other sign-ins, in other checkouts, go on.",
          security: SHOPPER_SECURITY,
          response: {
            200: Type.Object({ signedOut: Type.Literal(true) }),
            ...errorResponses(['SHOPPER_UNAUTHORIZED']),
          },
        },
      },
      async (request) => {
        await deps.checkout.signOut(shopperTokenOf(request));
        return { signedOut: true as const };
      },
    );
  };
