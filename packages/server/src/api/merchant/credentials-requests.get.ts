import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { CredentialsLookup, CredentialsRequestView } from '../../payments/lookup.js';
import { merchantOf } from '../plugins/auth.js';
import { BEARER_SECURITY, errorResponses, Timestamp } from '../schemas.js';
import { Attempt, toAttempt } from './webhooks.js';

export const CredentialsRequestResource = Type.Object({
  requestId: Type.String(),
  merchantReference: Type.String(),
  paymentId: Type.String(),
  sessionId: Type.String(),
  amount: Type.Integer({ description: 'Integer cents.' }),
  currency: Type.String(),
  state: Type.Union([Type.Literal('ACKNOWLEDGED'), Type.Literal('DELIVERED'), Type.Literal('FAILED')], {
    description:
      'ACKNOWLEDGED until the PAYMENT_CREDENTIALS webhook is delivered (DELIVERED) or abandoned (FAILED).',
  }),
  failureReason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last delivery attempt failed.',
  }),
  createdAt: Timestamp,
  webhook: Type.Object({
    messageId: Type.String({ description: 'The `webhook-id` header of every attempt.' }),
    attemptCount: Type.Integer(),
    nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
    attempts: Type.Array(Attempt),
  }),
  externalResponses: Type.Array(
    Type.Object({
      id: Type.String(),
      pspHostName: Type.String(),
      amount: Type.Integer(),
      currency: Type.String(),
      isRecurring: Type.Boolean(),
      createdAt: Timestamp,
    }),
  ),
});
type CredentialsRequestResource = Static<typeof CredentialsRequestResource>;

function toResource(view: CredentialsRequestView): CredentialsRequestResource {
  const { request, message } = view;
  return {
    requestId: request.id,
    merchantReference: request.merchantReference,
    paymentId: request.paymentId,
    sessionId: request.sessionId,
    amount: request.amount,
    currency: request.currency,
    state: view.state,
    failureReason: view.state === 'DELIVERED' ? null : message.lastError,
    createdAt: new Date(request.createdAt).toISOString(),
    webhook: {
      messageId: message.id,
      attemptCount: message.attemptCount,
      nextAttemptAt: message.state === 'PENDING' ? new Date(message.nextAttemptAt).toISOString() : null,
      attempts: message.attempts.map(toAttempt),
    },
    externalResponses: view.externalResponses.map((response) => ({
      id: response.id,
      pspHostName: response.pspHostName,
      amount: response.amount,
      currency: response.currency,
      isRecurring: response.isRecurring,
      createdAt: new Date(response.createdAt).toISOString(),
    })),
  };
}

export const credentialsLookupRoutes =
  (deps: { credentialsLookup: CredentialsLookup }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/payments/credentials/:requestId',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Credentials flow'],
          operationId: 'getCredentialsRequest',
          summary: 'Look up a credentials request',
          description:
            "State, delivery attempts and failure reason of one credentials request; never card data. Kept for the service's retention (30 days by default) after its webhook was delivered or given up, then answered as not found.",
          security: BEARER_SECURITY,
          params: Type.Object({ requestId: Type.String({ minLength: 1, maxLength: 64 }) }),
          response: {
            200: CredentialsRequestResource,
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR', 'CREDENTIALS_REQUEST_NOT_FOUND']),
          },
        },
      },
      async (request) =>
        toResource(await deps.credentialsLookup.byId(merchantOf(request).id, request.params.requestId)),
    );

    app.get(
      '/payments/credentials',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Credentials flow'],
          operationId: 'findCredentialsRequests',
          summary: 'Find credentials requests by merchant reference',
          description: 'Newest first; requests past the retention are no longer listed.',
          security: BEARER_SECURITY,
          querystring: Type.Object(
            {
              merchantReference: Type.String({ minLength: 1, maxLength: 128 }),
              limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({ data: Type.Array(CredentialsRequestResource) }),
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR']),
          },
        },
      },
      async (request) => {
        const { merchantReference, limit = 20 } = request.query;
        const views = await deps.credentialsLookup.byReference(
          merchantOf(request).id,
          merchantReference,
          limit,
        );
        return { data: views.map(toResource) };
      },
    );
  };
