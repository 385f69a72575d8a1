import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { ValidationError } from '../../errors.js';
import {
  CREDENTIALS_REQUEST_STATES,
  type CredentialsLookup,
  type CredentialsRequestView,
} from '../../payments/lookup.js';
import { merchantOf } from '../plugins/auth.js';
import {
  BEARER_SECURITY,
  CreatedWindow,
  createdWindow,
  errorResponses,
  ListQuery,
  literals,
  StartingAfter,
  Timestamp,
} from '../schemas.js';
import { Attempt, toAttempt } from './webhooks.js';

export const CredentialsRequestResource = Type.Object({
  requestId: Type.String(),
  merchantReference: Type.String(),
  paymentId: Type.String(),
  sessionId: Type.String(),
  amount: Type.Integer({ description: 'Integer cents.' }),
  currency: Type.String(),
  state: Type.Union(
    CREDENTIALS_REQUEST_STATES.map((state) => Type.Literal(state)),
    {
      description:
        'ACKNOWLEDGED until the PAYMENT_CREDENTIALS webhook is delivered (DELIVERED) or abandoned (FAILED).',
    },
  ),
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

/** The list's filters a `merchantReference` look-up does not take: it answers every request made with it. */
const WITHOUT_REFERENCE = ['state', 'createdSince', 'createdBefore', 'startingAfter'] as const;

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
          summary: 'List credentials requests, or find them by merchant reference',
          description: `Your credentials requests, newest first (by creation time, then id), as \`GET /payments/credentials/{requestId}\` answers each: to reconcile, after an outage on your side, what your server recorded with what the service did. Narrow them by \`state\` or by when they were created. For the next page, pass the last request's \`requestId\` as \`startingAfter\`, with the same filters, while \`hasMore\` is true: requests made meanwhile are newer than the first page and never shift the pages. With \`merchantReference\`, the answer is every request made with that reference (up to \`limit\`), newest first, without \`hasMore\`; it takes none of ${WITHOUT_REFERENCE.map((name) => `\`${name}\``).join(', ')}. Requests past the service's retention (30 days by default after their webhook was delivered or given up) are no longer listed.`,
          security: BEARER_SECURITY,
          querystring: ListQuery({
            merchantReference: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 128,
                description: 'Your order or invoice number: every request made with it, and no other filter.',
              }),
            ),
            state: Type.Optional(literals(CREDENTIALS_REQUEST_STATES)),
            ...CreatedWindow,
            startingAfter: StartingAfter(
              'A `requestId`, usually the last of the previous page: lists the requests after it (older). 404 CREDENTIALS_REQUEST_NOT_FOUND when it is not one of yours.',
            ),
          }),
          response: {
            200: Type.Object({
              data: Type.Array(CredentialsRequestResource),
              hasMore: Type.Optional(
                Type.Boolean({
                  description:
                    'Whether more requests match beyond this page: ask again with `startingAfter`. Absent from a `merchantReference` look-up.',
                }),
              ),
            }),
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR', 'CREDENTIALS_REQUEST_NOT_FOUND']),
          },
        },
      },
      async (request) => {
        const { merchantReference, state, startingAfter, limit = 20, ...window } = request.query;
        const merchantId = merchantOf(request).id;
        if (merchantReference !== undefined) {
          const given = WITHOUT_REFERENCE.find((name) => request.query[name] !== undefined);
          if (given !== undefined) {
            throw new ValidationError(
              `query parameter ${given} cannot be combined with merchantReference, which answers every request made with it`,
            );
          }
          const views = await deps.credentialsLookup.byReference(merchantId, merchantReference, limit);
          return { data: views.map(toResource) };
        }
        const page = await deps.credentialsLookup.list(merchantId, {
          state,
          startingAfter,
          limit,
          ...createdWindow(window),
        });
        return { data: page.data.map(toResource), hasMore: page.hasMore };
      },
    );
  };
