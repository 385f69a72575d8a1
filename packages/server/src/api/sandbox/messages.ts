import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { SandboxMailbox } from '../../shopper-auth/index.js';
import { errorResponses } from '../schemas.js';

const SandboxMessage = Type.Object({
  to: Type.String(),
  subject: Type.String(),
  text: Type.String({ description: 'The plain-text body; a one-time code is in it.' }),
  sentAt: Type.String({ format: 'date-time' }),
});

/**
 * Staging only: the messages the service would have e-mailed to a shopper, so a developer or a browser
 * test can read a new shopper's one-time code. No API key: the checkout's new-shopper flow is tried from
 * a browser, and staging holds test data only.
 */
export const sandboxMessagesRoute =
  (mailbox: SandboxMailbox): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/sandbox/messages',
      {
        schema: {
          tags: ['Sandbox'],
          summary: 'Messages sent to a shopper (staging only)',
          description: 'The newest first, at most 50, kept for a day. Not available in production.',
          querystring: Type.Object({
            to: Type.String({
              minLength: 3,
              maxLength: 254,
              pattern: '^[^@\\s]+@[^@\\s]+$',
              description: 'The recipient e-mail address (any case).',
            }),
          }),
          response: {
            200: Type.Object({ data: Type.Array(SandboxMessage) }),
            ...errorResponses(['VALIDATION_ERROR']),
          },
        },
      },
      async (request) => {
        const messages = await mailbox.list(request.query.to);
        return {
          data: messages.map((message) => ({
            to: message.to,
            subject: message.subject,
            text: message.text,
            sentAt: message.sentAt.toISOString(),
          })),
        };
      },
    );
  };
