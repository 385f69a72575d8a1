import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { CredentialsService } from '../../payments/credentials.js';
import { Acknowledgement, Currency, Money } from '../schemas.js';
import { credentialsFlowRoute } from './credentials-flow-route.js';

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

export const CredentialsAcknowledgement = Type.Composite([
  Acknowledgement,
  Type.Object({
    requestId: Type.String({
      description: 'Id of the credentials request, for GET /payments/credentials/{requestId}.',
    }),
  }),
]);

export const credentialsRoute = (service: CredentialsService): FastifyPluginAsyncTypebox =>
  credentialsFlowRoute({
    name: 'credentials',
    operationId: 'requestPaymentCredentials',
    summary: 'Request payment credentials',
    description:
      'Validates the request and acknowledges it; the credentials follow asynchronously in a signed `PAYMENT_CREDENTIALS` webhook to the URL of the merchant account. The merchant account must be approved for the credentials flow.',
    body: CredentialsRequestBody,
    answer: CredentialsAcknowledgement,
    errors: [
      'UNSUPPORTED_CURRENCY',
      'MERCHANT_NOT_APPROVED',
      'SESSION_NOT_FOUND',
      'PAYMENT_METHOD_NOT_FOUND',
      'SESSION_EXPIRED',
      'PAYMENT_METHOD_EXPIRED',
      'AMOUNT_EXCEEDS_SELECTION',
      'WEBHOOK_URL_NOT_CONFIGURED',
    ],
    handle: (merchant, body, idempotency) => service.request(merchant, body, idempotency),
  });
