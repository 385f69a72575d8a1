import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { ExternalResponseService } from '../../payments/external-response.js';
import { Acknowledgement, Currency, Money } from '../schemas.js';
import { credentialsFlowRoute } from './credentials-flow-route.js';

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

const ExternalResponseAcknowledgement = Type.Composite([
  Acknowledgement,
  Type.Object({
    externalResponseId: Type.String({
      description:
        'Id of the recorded response (`ext_…`), as listed in `externalResponses` of the credentials request.',
    }),
    requestId: Type.String({
      description:
        "Id of the credentials request the response was linked to: this merchant's latest for the `paymentId`.",
    }),
  }),
]);

export const externalResponseRoute = (service: ExternalResponseService): FastifyPluginAsyncTypebox =>
  credentialsFlowRoute({
    name: 'externalresponse',
    operationId: 'reportExternalResponse',
    summary: "Report the processor's authorization response",
    description:
      "Completes the credentials flow: the processor's raw response is linked to this merchant's latest credentials request for the payment method. The amount may not exceed the requested amount. When the session came from a `merchant` authorization mode checkout, the response is also linked to that order: `GET /orders/{orderId}` shows it in `merchantAuthorization.externalResponse`, and the order stays `PROCESSING` (the service does not interpret the processor's answer).",
    body: ExternalResponseBody,
    answer: ExternalResponseAcknowledgement,
    errors: ['UNSUPPORTED_CURRENCY', 'CREDENTIALS_REQUEST_NOT_FOUND', 'AMOUNT_EXCEEDS_REQUESTED'],
    handle: (merchant, body, idempotency) => service.report(merchant, body, idempotency),
  });
