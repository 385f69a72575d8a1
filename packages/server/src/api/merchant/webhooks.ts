import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import {
  type AttemptRecord,
  type MessageSummary,
  RECOVER_BATCH,
  WEBHOOK_TEST,
  type Webhooks,
  type WebhookTester,
} from '../../webhooks/index.js';
import { actorOf, merchantOf } from '../plugins/auth.js';
import {
  BEARER_SECURITY,
  COMMON_POST_ERRORS,
  CreatedWindow,
  createdWindow,
  errorResponses,
  IdempotencyHeaders,
  ListQuery,
  Page,
  StartingAfter,
  Timestamp,
} from '../schemas.js';

export const Attempt = Type.Object({
  attemptedAt: Timestamp,
  statusCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "The receiver's HTTP status; null when none came.",
  }),
  latencyMs: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});

export function toAttempt(attempt: AttemptRecord): Static<typeof Attempt> {
  return {
    attemptedAt: new Date(attempt.attemptedAt).toISOString(),
    statusCode: attempt.statusCode,
    latencyMs: attempt.latencyMs,
    error: attempt.error,
  };
}

const State = Type.Union([Type.Literal('PENDING'), Type.Literal('DELIVERED'), Type.Literal('FAILED')]);

export const Message = Type.Object({
  id: Type.String({ description: 'Sent as the `webhook-id` header on every attempt.' }),
  eventName: Type.String(),
  subjectId: Type.String({ description: 'The record the event is about, e.g. a credentials request id.' }),
  state: State,
  attemptCount: Type.Integer(),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
});

export const MessageWithAttempts = Type.Composite([Message, Type.Object({ attempts: Type.Array(Attempt) })]);

function toMessage(message: MessageSummary): Static<typeof Message> {
  return {
    id: message.id,
    eventName: message.eventName,
    subjectId: message.subjectId,
    state: message.state,
    attemptCount: message.attemptCount,
    nextAttemptAt: message.state === 'PENDING' ? new Date(message.nextAttemptAt).toISOString() : null,
    lastError: message.lastError,
    createdAt: new Date(message.createdAt).toISOString(),
  };
}

const MessageParams = Type.Object({ messageId: Type.String({ minLength: 1, maxLength: 64 }) });

/** The merchant's view of its webhook deliveries: list, inspect attempts, send again. Bodies are never kept. */
export const webhookRoutes =
  ({
    webhooks,
    tester,
    merchants,
  }: {
    webhooks: Webhooks;
    tester: WebhookTester;
    /** Which of the merchant's keys sent a message again, for the audit trail. */
    merchants: { apiKeyIdOf(apiKey: string): Promise<string | undefined> };
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/webhooks/messages',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Webhooks'],
          operationId: 'listWebhookMessages',
          summary: 'List webhook messages',
          description:
            "Newest first (by creation time, then id). For the next page, pass the last message id as `startingAfter` while `hasMore` is true. Messages are kept for the service's retention (30 days by default) after they were delivered or given up.",
          security: BEARER_SECURITY,
          querystring: ListQuery({
            state: Type.Optional(State),
            subjectId: Type.Optional(Type.String({ maxLength: 64 })),
            ...CreatedWindow,
            startingAfter: StartingAfter(
              'A message id, usually the last of the previous page: lists the messages after it (older). 404 WEBHOOK_MESSAGE_NOT_FOUND when it is not one of yours.',
            ),
          }),
          response: {
            200: Page(Message, 'messages'),
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR', 'WEBHOOK_MESSAGE_NOT_FOUND']),
          },
        },
      },
      async (request) => {
        const { createdSince, createdBefore, ...filter } = request.query;
        const page = await webhooks.listPage(merchantOf(request).id, {
          ...filter,
          ...createdWindow({ createdSince, createdBefore }),
        });
        return { data: page.data.map(toMessage), hasMore: page.hasMore };
      },
    );

    app.get(
      '/webhooks/messages/:messageId',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Webhooks'],
          operationId: 'getWebhookMessage',
          summary: 'A webhook message with its delivery attempts',
          security: BEARER_SECURITY,
          params: MessageParams,
          response: {
            200: MessageWithAttempts,
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR', 'WEBHOOK_MESSAGE_NOT_FOUND']),
          },
        },
      },
      async (request) => {
        const message = await webhooks.get(merchantOf(request).id, request.params.messageId);
        return { ...toMessage(message), attempts: message.attempts.map(toAttempt) };
      },
    );

    app.post(
      '/webhooks/messages/:messageId/resend',
      {
        config: { auth: 'merchant', idempotent: 'webhooks.messages.resend' },
        schema: {
          tags: ['Webhooks'],
          operationId: 'resendWebhookMessage',
          summary: 'Send a delivered or failed message again',
          description:
            "Same `webhook-id`, a fresh retry schedule; the payload is built again at delivery. Recorded in the service's audit trail.",
          security: BEARER_SECURITY,
          headers: IdempotencyHeaders,
          params: MessageParams,
          response: {
            200: Message,
            ...errorResponses([...COMMON_POST_ERRORS, 'WEBHOOK_MESSAGE_NOT_FOUND', 'WEBHOOK_NOT_RESENDABLE']),
          },
        },
      },
      async (request) => {
        const by = await actorOf(request, merchants);
        return toMessage(await webhooks.resend(merchantOf(request).id, request.params.messageId, by));
      },
    );

    app.post(
      '/webhooks/messages/recover',
      {
        config: { auth: 'merchant', idempotent: 'webhooks.messages.recover' },
        schema: {
          tags: ['Webhooks'],
          operationId: 'recoverWebhookMessages',
          summary: 'Send again every message given up since a time',
          description: `After your endpoint was down for longer than the retry schedule: every message of yours that ended FAILED at or after \`since\` goes out again, oldest first, each with its original \`webhook-id\` (receivers that de-duplicate on it see a message they already took as such) and a fresh retry schedule. At most ${RECOVER_BATCH} a call; call again while \`hasMore\` is true. A \`PAYMENT_CREDENTIALS\` message whose card the shopper has since removed is never sent again (its card data is to be erased); \`notSent\` counts those. A call that sends any again is recorded in the service's audit trail.`,
          security: BEARER_SECURITY,
          headers: IdempotencyHeaders,
          body: Type.Object({
            since: Type.String({
              format: 'date-time',
              description:
                'Messages given up at or after this time are sent again, e.g. `2026-11-25T08:00:00Z`.',
            }),
          }),
          response: {
            200: Type.Object({
              recovered: Type.Integer({ description: 'Messages sent again by this call.' }),
              hasMore: Type.Boolean({ description: 'Whether more such messages are left: call again.' }),
              notSent: Type.Integer({
                description:
                  'Messages given up since `since` that are never sent again, because the shopper has removed the card they carry: the same on every call.',
              }),
            }),
            ...errorResponses(COMMON_POST_ERRORS),
          },
        },
      },
      async (request) => {
        const by = await actorOf(request, merchants);
        return webhooks.recover(merchantOf(request).id, Date.parse(request.body.since), by);
      },
    );

    app.post(
      '/webhooks/test',
      {
        config: { auth: 'merchant', idempotent: 'webhooks.test' },
        schema: {
          tags: ['Webhooks'],
          operationId: 'sendTestWebhook',
          summary: 'Send a test webhook to your endpoint now',
          description: `One \`${WEBHOOK_TEST}\` webhook, \`{ "eventName": "${WEBHOOK_TEST}", "merchantId", "sentAt" }\`, signed like every other, sent at once to your webhook URL; the answer reports how your endpoint answered. Nothing is stored or retried, and its \`webhook-id\` (\`tst_…\`) is not a message of the list. At most 10 a minute.`,
          security: BEARER_SECURITY,
          headers: IdempotencyHeaders,
          response: {
            200: Type.Object({
              webhookId: Type.String({ description: 'The `webhook-id` it was sent with.' }),
              url: Type.Union([Type.String(), Type.Null()], {
                description: 'Where it was sent; null when no webhook URL is configured.',
              }),
              delivered: Type.Boolean({ description: 'Whether your endpoint answered 2xx.' }),
              statusCode: Type.Union([Type.Integer(), Type.Null()], {
                description: "Your endpoint's HTTP status; null when none came.",
              }),
              latencyMs: Type.Integer(),
              error: Type.Union([Type.String(), Type.Null()], {
                description:
                  'Why it was not delivered: the status, a time-out, a refused connection, a URL not allowed…',
              }),
            }),
            ...errorResponses([...COMMON_POST_ERRORS, 'RATE_LIMITED']),
          },
        },
      },
      async (request) => tester.send(merchantOf(request).id),
    );
  };
