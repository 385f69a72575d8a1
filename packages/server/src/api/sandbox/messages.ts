import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ValidationError } from '../../errors.js';
import { isTestAddress, TEST_ADDRESS_RULE } from '../../sandbox/seed.js';
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
 * a browser, and staging holds test data only. With `testAddressesOnly` (staging sending real mail, so
 * possibly to real shoppers), only messages to test addresses.
 */
export const sandboxMessagesRoute =
  (mailbox: SandboxMailbox, options: { testAddressesOnly: boolean }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/sandbox/messages',
      {
        schema: {
          tags: ['Sandbox'],
          operationId: 'listSandboxMessages',
          summary: 'Messages sent to a shopper (staging only)',
          description:
            'The newest first, at most 50, kept for a day. Not available in production. Where staging sends real e-mail (`SMTP_URL` set), only for test addresses (example.com, example.net, example.org, or under .test, .example, .invalid or .localhost); another `to` is a 400.',
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
        if (options.testAddressesOnly && !isTestAddress(request.query.to)) {
          throw new ValidationError(`to: ${TEST_ADDRESS_RULE}`);
        }
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
