import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DomainError, ValidationError } from '../../errors.js';
import { isTestAddress, TEST_ADDRESS_RULE, TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import type { Sessions, Wallet } from '../../wallet/index.js';
import { merchantOf } from '../plugins/auth.js';
import { BEARER_SECURITY, COMMON_POST_ERRORS, errorResponses, IdempotencyHeaders } from '../schemas.js';

const PaymentMethod = Type.Object({
  paymentId: Type.String({ description: 'Pass as `paymentId` to POST /payments/credentials.' }),
  cardBrand: Type.String(),
  last4CardNumber: Type.String(),
  expMonth: Type.Integer(),
  expYear: Type.Integer(),
  isDefault: Type.Boolean(),
  needsCvv: Type.Boolean(),
  nickName: Type.Union([Type.String(), Type.Null()]),
});

/**
 * Staging only: a payment-carousel session for a test shopper without the browser, so a merchant can
 * exercise the credentials flow from a terminal. With `testAddressesOnly` (staging sending real mail),
 * only for shoppers at test addresses: anyone's session would give any merchant their cards.
 */
export const sandboxSessionsRoute =
  (deps: {
    wallet: Wallet;
    sessions: Sessions;
    sessionTtlSeconds: number;
    testAddressesOnly: boolean;
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/sandbox/sessions',
      {
        config: { auth: 'merchant', idempotent: 'sandbox.sessions.create' },
        schema: {
          tags: ['Sandbox'],
          operationId: 'createSandboxSession',
          summary: 'Create a payment-carousel session for a test shopper (staging only)',
          description: `Defaults to the test shopper \`${TEST_SHOPPER_EMAIL}\`. Not available in production. Where staging sends real e-mail (\`SMTP_URL\` set), only for shoppers at test addresses (example.com, example.net, example.org, or under .test, .example, .invalid or .localhost); another \`email\` is a 400.`,
          security: BEARER_SECURITY,
          headers: IdempotencyHeaders,
          body: Type.Object({
            email: Type.Optional(
              Type.String({
                maxLength: 254,
                pattern: '^[^@\\s]+@[^@\\s]+$',
                description: 'An e-mail address.',
              }),
            ),
          }),
          response: {
            200: Type.Object({
              sessionId: Type.String(),
              email: Type.String(),
              expiresAt: Type.String({ format: 'date-time' }),
              paymentMethods: Type.Array(PaymentMethod),
            }),
            ...errorResponses([...COMMON_POST_ERRORS, 'SHOPPER_NOT_FOUND']),
          },
        },
      },
      async (request) => {
        const merchant = merchantOf(request);
        const email = request.body.email ?? TEST_SHOPPER_EMAIL;
        if (deps.testAddressesOnly && !isTestAddress(email)) {
          throw new ValidationError(`email: ${TEST_ADDRESS_RULE}`);
        }
        const shopper = await deps.wallet.findShopperByEmail(email);
        if (!shopper) throw new DomainError('SHOPPER_NOT_FOUND', `No shopper with email ${email}.`);
        const session = await deps.sessions.create({
          merchantId: merchant.id,
          shopperId: shopper.id,
          ttlSeconds: deps.sessionTtlSeconds,
        });
        const cards = await deps.wallet.listCards(shopper.id);
        return {
          sessionId: session.id,
          email: shopper.email,
          expiresAt: new Date(session.expiresAt).toISOString(),
          paymentMethods: cards.map((card) => ({
            paymentId: card.id,
            cardBrand: card.brand,
            last4CardNumber: card.last4,
            expMonth: card.expMonth,
            expYear: card.expYear,
            isDefault: card.isDefault,
            needsCvv: card.needsCvv,
            nickName: card.nickname,
          })),
        };
      },
    );
  };
