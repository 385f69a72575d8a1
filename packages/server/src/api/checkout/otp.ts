import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import type { RateLimits } from '../../rate-limits.js';
import { clientKey } from '../../rate-limits.js';
import type { ShopperAuth } from '../../shopper-auth/index.js';
import { errorResponses } from '../schemas.js';
import { CHECKOUT_TAG, OrderParams, SHOPPER_SECURITY, shopperTokenOf } from './shopper-api.js';
import { limitSignIn, SIGN_IN_LIMIT_NOTE } from './shoppers.rate-limit.js';

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

const DeviceToken = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'The `deviceToken` of a sign-in that asked to remember the device.',
});

const DeviceExpiresAt = Type.String({
  format: 'date-time',
  description:
    'Until when the device signs the shopper in at this checkout: a `deviceToken` kept in a cookie expires then.',
});

const CodeProof = Type.Object({
  email: Email,
  code: Type.String({ pattern: '^[0-9]{6}$', description: '6 digits.' }),
  rememberDevice: Type.Optional(
    Type.Boolean({
      description:
        '"Remember me on this device": the answer carries a `deviceToken` that signs the shopper in to later checkouts without a code, for `REMEMBER_DEVICE_DAYS` (30 unless the operator set it). None is given when it is `off` or the merchant turned remembering devices off, which the order summary\'s `rememberDeviceDays: null` tells.',
    }),
  ),
});

const CodeProofAnswer = Type.Object({
  ...ShopperTokenGrant.properties,
  deviceToken: Type.Optional(
    Type.String({
      description:
        "Only when `rememberDevice` was asked: keep it in the page's own storage (or, where a frame of another site gets none, a partitioned cookie of the page's), and send it to `POST …/resume`.",
    }),
  ),
  deviceExpiresAt: Type.Optional(DeviceExpiresAt),
});

const ResumeAnswer = Type.Object({
  ...ShopperTokenGrant.properties,
  deviceExpiresAt: DeviceExpiresAt,
});

/** Sign-in with a one-time code sent to the shopper's email, for one order, and sign-out. */
export const otpRoutes =
  (deps: {
    checkout: Checkout;
    shopperAuth: ShopperAuth;
    rateLimits: RateLimits;
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/checkout/api/orders/:orderId/otp',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'sendOneTimeCode',
          summary: 'Send a one-time code to a known shopper',
          description: `An email without a wallet gets \`{ status: "enrol" }\` and nothing is sent. \`OTP_THROTTLED\` carries \`Retry-After\` in seconds. ${SIGN_IN_LIMIT_NOTE}`,
          params: OrderParams,
          body: Type.Object({ email: Email }),
          response: {
            200: CodeRequestAnswer,
            ...errorResponses([
              'VALIDATION_ERROR',
              'ORDER_NOT_FOUND',
              'ORDER_STATE_CONFLICT',
              'OTP_THROTTLED',
              'RATE_LIMITED',
              'MESSAGE_NOT_SENT',
            ]),
          },
        },
      },
      async (request) => {
        await limitSignIn(deps, request.ip, request.body.email);
        return deps.checkout.requestCode(request.params.orderId, request.body.email, clientKey(request.ip));
      },
    );

    app.post(
      '/checkout/api/orders/:orderId/otp/verify',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'verifyOneTimeCode',
          summary: 'Prove the one-time code and get a shopper token',
          description:
            'For a new shopper (after `POST …/enrol`) this also creates the wallet: shopper, billing address and card.',
          params: OrderParams,
          body: CodeProof,
          response: {
            200: CodeProofAnswer,
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
      async (request) => {
        const { email, code, rememberDevice } = request.body;
        const { device, ...grant } = await deps.checkout.verify(
          request.params.orderId,
          email,
          code,
          rememberDevice,
          clientKey(request.ip),
        );
        return device
          ? { ...grant, deviceToken: device.deviceToken, deviceExpiresAt: device.expiresAt }
          : grant;
      },
    );

    app.post(
      '/checkout/api/orders/:orderId/resume',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'signInWithRememberedDevice',
          summary: 'Sign in with a remembered device, without a code',
          description:
            'The shopper a `deviceToken` remembers gets a shopper token for this order. With `email` (a guest redirect), the device must remember that shopper; one that remembers another answers `DEVICE_NOT_RECOGNIZED` and is forgotten. An unknown, expired or forgotten token answers `DEVICE_NOT_RECOGNIZED` too, and so does any token at a merchant whose checkout does not remember devices: forget it, and ask for a code.',
          params: OrderParams,
          body: Type.Object({ deviceToken: DeviceToken, email: Type.Optional(Email) }),
          response: {
            200: ResumeAnswer,
            ...errorResponses([
              'VALIDATION_ERROR',
              'DEVICE_NOT_RECOGNIZED',
              'ORDER_NOT_FOUND',
              'ORDER_STATE_CONFLICT',
            ]),
          },
        },
      },
      async (request) =>
        deps.checkout.resume(request.params.orderId, request.body.deviceToken, request.body.email),
    );

    app.post(
      '/checkout/api/sign-out',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'signOutShopper',
          summary: 'Sign the shopper out ("Not you?")',
          description:
            'The shopper token stops working at once (later calls with it answer `401 SHOPPER_UNAUTHORIZED`), rather than at its expiry. The body may be left out; with `{ "deviceToken": … }` that device no longer signs anyone in either. A token that already ended, or is unknown, answers the same, so a retry is safe. The shopper\'s other sign-ins, in other checkouts and on other devices, go on.',
          security: SHOPPER_SECURITY,
          body: Type.Object({ deviceToken: Type.Optional(DeviceToken) }, { additionalProperties: false }),
          response: {
            200: Type.Object({ signedOut: Type.Literal(true) }),
            ...errorResponses(['VALIDATION_ERROR', 'SHOPPER_UNAUTHORIZED']),
          },
        },
        // The body is optional: a sign-out without one (no device to forget) is validated as `{}`.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => {
        await deps.checkout.signOut(shopperTokenOf(request), request.body.deviceToken);
        return { signedOut: true as const };
      },
    );
  };
