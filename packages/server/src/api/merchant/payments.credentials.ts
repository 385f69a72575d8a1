import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { CredentialsService } from '../../payments/credentials.js';
import { merchantOf } from '../plugins/auth.js';
import {
  Acknowledgement,
  BEARER_SECURITY,
  COMMON_POST_ERRORS,
  Currency,
  errorResponses,
  IdempotencyHeaders,
  Money,
} from '../schemas.js';

export const CredentialsRequestBody = Type.Object({
  paymentId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "Id of the payment method selected in the shopper's payment carousel.",
  }),
  sessionId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "Id of the shopper's payment carousel session.",
  }),
  amount: Money,
  merchantReference: Type.String({
    minLength: 1,
    maxLength: 128,
    description: "The merchant's unique identifier or invoice number for this transaction.",
  }),
  currency: Currency,
});
export type CredentialsRequestBody = Static<typeof CredentialsRequestBody>;

const CredentialsAcknowledgement = Type.Composite([
  Acknowledgement,
  Type.Object({
    requestId: Type.String({
      description: 'Id of the credentials request, for GET /payments/credentials/{requestId}.',
    }),
  }),
]);

export const credentialsRoute =
  (service: CredentialsService): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const url of ['/payments/credentials', '/payment/credentials']) {
      app.post(
        url,
        {
          config: { auth: 'merchant', idempotent: true },
          schema: {
            hide: url === '/payment/credentials',
            tags: ['Credentials flow'],
            summary: 'Request payment credentials',
            description:
              'Validates the request and acknowledges it; the credentials follow asynchronously in a signed `PAYMENT_CREDENTIALS` webhook to the URL of the merchant account. The merchant account must be approved for the credentials flow. Also served at `/payment/credentials`.',
            security: BEARER_SECURITY,
            headers: IdempotencyHeaders,
            body: CredentialsRequestBody,
            response: {
              200: CredentialsAcknowledgement,
              ...errorResponses([
                ...COMMON_POST_ERRORS,
                'UNSUPPORTED_CURRENCY',
                'MERCHANT_NOT_APPROVED',
                'SESSION_NOT_FOUND',
                'PAYMENT_METHOD_NOT_FOUND',
                'SESSION_EXPIRED',
                'PAYMENT_METHOD_EXPIRED',
                'WEBHOOK_URL_NOT_CONFIGURED',
              ]),
            },
          },
        },
        async (request) => service.request(merchantOf(request), request.body, request.idempotency),
      );
    }
  };
