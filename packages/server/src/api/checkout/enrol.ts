import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import type { RateLimits } from '../../rate-limits.js';
import { clientKey } from '../../rate-limits.js';
import type { ShopperAuth } from '../../shopper-auth/index.js';
import { errorResponses } from '../schemas.js';
import { CodeRequestAnswer } from './otp.js';
import { AddressFields, CardFields, CHECKOUT_TAG, OrderParams } from './shopper-api.js';
import { limitSignIn, SIGN_IN_LIMIT_NOTE } from './shoppers.rate-limit.js';

const { firstName: _first, lastName: _last, ...BillingFields } = AddressFields;

export const EnrolBody = Type.Object({
  email: Type.String({ maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }),
  firstName: AddressFields.firstName,
  lastName: AddressFields.lastName,
  phone: Type.String({ pattern: '^\\+?[0-9 ()-]{7,20}$', description: 'Such as `+15125550100`.' }),
  card: Type.Object({
    ...CardFields,
    cvv: Type.Optional(
      Type.String({
        pattern: '^[0-9]{3,4}$',
        description:
          "Checked for form only, never stored. Required when the service authorizes the payment (the merchant's `service` mode); in `merchant` mode it is not asked, as nothing would send it.",
      }),
    ),
  }),
  billingAddress: Type.Object(BillingFields, {
    description: "The card's billing address; the name and phone are the shopper's.",
  }),
});

/**
 * A new shopper's enrolment: the details wait (without the CVV, which the page sends again with the
 * payment) for the one-time code sent here; `POST …/otp/verify` completes it.
 */
export const enrolRoute =
  (deps: {
    checkout: Checkout;
    shopperAuth: ShopperAuth;
    rateLimits: RateLimits;
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/checkout/api/orders/:orderId/enrol',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'enrolShopper',
          summary: 'Enrol a new shopper: keep the card and address, send a one-time code',
          description: SIGN_IN_LIMIT_NOTE,
          params: OrderParams,
          body: EnrolBody,
          response: {
            200: CodeRequestAnswer,
            ...errorResponses([
              'VALIDATION_ERROR',
              'ORDER_NOT_FOUND',
              'ORDER_STATE_CONFLICT',
              'SHOPPER_ALREADY_EXISTS',
              'OTP_THROTTLED',
              'RATE_LIMITED',
              'MESSAGE_NOT_SENT',
            ]),
          },
        },
      },
      async (request) => {
        await limitSignIn(deps, request.ip, request.body.email);
        return deps.checkout.enrol(request.params.orderId, request.body, clientKey(request.ip));
      },
    );
  };
