import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { ExternalResponseService } from '../../payments/external-response.js';
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

export const ExternalResponseBody = Type.Object({
  paymentId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "Id of the payment method selected in the shopper's payment carousel.",
  }),
  pspRawResponse: Type.String({
    minLength: 1,
    maxLength: 32_768,
    description: "Full, unformatted response of the merchant's processor. Stored encrypted.",
  }),
  amount: Money,
  pspHostName: Type.String({
    minLength: 1,
    maxLength: 128,
    description: "Name of the merchant's processor.",
  }),
  currency: Currency,
  isRecurring: Type.Boolean({ description: 'True when the payment was a recurring (card-on-file) payment.' }),
});
export type ExternalResponseBody = Static<typeof ExternalResponseBody>;

export const externalResponseRoute =
  (service: ExternalResponseService): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const url of ['/payments/externalresponse', '/payment/externalresponse']) {
      app.post(
        url,
        {
          config: { auth: 'merchant', idempotent: true },
          schema: {
            hide: url === '/payment/externalresponse',
            tags: ['Credentials flow'],
            summary: "Report the processor's authorization response",
            description:
              "Completes the credentials flow: the processor's raw response is linked to this merchant's latest credentials request for the payment method. The amount may not exceed the requested amount. Also served at `/payment/externalresponse`.",
            security: BEARER_SECURITY,
            headers: IdempotencyHeaders,
            body: ExternalResponseBody,
            response: {
              200: Acknowledgement,
              ...errorResponses([
                ...COMMON_POST_ERRORS,
                'UNSUPPORTED_CURRENCY',
                'CREDENTIALS_REQUEST_NOT_FOUND',
                'AMOUNT_EXCEEDS_REQUESTED',
              ]),
            },
          },
        },
        async (request) => service.report(merchantOf(request), request.body, request.idempotency),
      );
    }
  };
