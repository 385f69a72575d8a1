import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import {
  AUTHORIZATION_MODES,
  CREDENTIAL_TYPES,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_OVERLAP_SECONDS,
  MAX_OVERLAP_SECONDS,
  type Merchant,
  type Merchants,
  VARIANTS,
} from '../../merchants/index.js';
import { ShippingMethod } from '../checkout/shopper-api.js';
import { actorOf, merchantOf } from '../plugins/auth.js';
import { BEARER_SECURITY, COMMON_POST_ERRORS, errorResponses, literals, Timestamp } from '../schemas.js';

const CACHE_SECONDS = DEFAULT_CACHE_TTL_MS / 1000;

const TaxSettings = Type.Object({
  ratesByState: Type.Record(Type.String(), Type.Integer(), {
    description: 'Sales tax per US state abbreviation, in basis points (825 = 8.25 %), on the subtotal.',
  }),
});

export const Account = Type.Object({
  merchantId: Type.String(),
  name: Type.String(),
  webhookUrl: Type.Union([Type.String(), Type.Null()], {
    description: 'Where webhooks are delivered; null when none is set.',
  }),
  allowedOrigins: Type.Array(Type.String(), {
    description: 'The page origins (scheme://host[:port]) allowed to open the checkout.',
  }),
  credentialTypes: Type.Array(literals(CREDENTIAL_TYPES), {
    description:
      'What a PAYMENT_CREDENTIALS webhook carries; empty until the service’s operators approve the account for the credentials flow.',
  }),
  variant: literals(VARIANTS),
  authorizationMode: literals(AUTHORIZATION_MODES),
  shippingMethods: Type.Array(ShippingMethod),
  taxSettings: TaxSettings,
  rememberDevices: Type.Boolean({
    description: 'Whether the checkout offers shoppers “Remember me on this device”.',
  }),
  createdAt: Timestamp,
  liveApiKeys: Type.Integer({ description: 'API keys not revoked, this one included.' }),
  olderWebhookSecretsUntil: Type.Array(Timestamp, {
    description:
      'When each older webhook secret that still signs beside the current one stops, soonest first: during a rotation’s overlap every webhook carries one signature per secret.',
  }),
});
type Account = Static<typeof Account>;

const AccountPatch = Type.Object(
  {
    webhookUrl: Type.Optional(
      Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
        description:
          'https and a public address in production; null removes it (credentials requests are then refused with WEBHOOK_URL_NOT_CONFIGURED).',
      }),
    ),
    allowedOrigins: Type.Optional(
      Type.Array(Type.String({ maxLength: 2048 }), {
        maxItems: 50,
        description: 'Replaces the list: scheme://host[:port], https in production.',
      }),
    ),
    shippingMethods: Type.Optional(
      Type.Array(
        Type.Object(
          {
            externalId: Type.Optional(
              Type.String({
                description:
                  'Letters, digits, `_` and `-`, at most 64; a method given without one gets a new id.',
              }),
            ),
            name: Type.String(),
            price: Type.Integer({ description: 'Integer cents.' }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 50, description: 'Replaces the list.' },
      ),
    ),
    taxSettings: Type.Optional(TaxSettings),
    rememberDevices: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Only the fields given change. The name, the credentials approval, the variant and the authorization mode are set by the service’s operators.',
  },
);

async function accountOf(merchants: Merchants, merchant: Merchant): Promise<Account> {
  const { liveApiKeys, olderWebhookSecretsUntil } = await merchants.credentialsState(merchant.id);
  const { id, createdAt, ...settings } = merchant;
  return {
    merchantId: id,
    ...settings,
    createdAt: new Date(createdAt).toISOString(),
    liveApiKeys,
    olderWebhookSecretsUntil: olderWebhookSecretsUntil.map((at) => new Date(at).toISOString()),
  };
}

/**
 * The merchant's own account: its settings, the ones it may change itself, and its webhook secret's
 * rotation. API keys stay with the service's operators (`npx wallet-checkout apikey …`), so that a leaked
 * key cannot make itself more.
 */
export const accountRoutes =
  ({ merchants }: { merchants: Merchants }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/account',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Account'],
          operationId: 'getAccount',
          summary: 'Your merchant account',
          description:
            'Its settings, how many API keys are live, and whether older webhook secrets still sign.',
          security: BEARER_SECURITY,
          response: { 200: Account, ...errorResponses(['UNAUTHORIZED']) },
        },
      },
      async (request) => accountOf(merchants, merchantOf(request)),
    );

    app.patch(
      '/account',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Account'],
          operationId: 'updateAccount',
          summary: 'Change your webhook URL, allowed origins, shipping methods, tax rates or device memory',
          description: `With the rules the operators’ \`merchant update\` applies; every change is recorded in the audit trail with the key that made it. This process applies it at once, the service’s other processes within ${CACHE_SECONDS} s.`,
          security: BEARER_SECURITY,
          body: AccountPatch,
          response: { 200: Account, ...errorResponses(COMMON_POST_ERRORS) },
        },
      },
      async (request) => {
        const updated = await merchants.update(
          merchantOf(request).id,
          request.body,
          await actorOf(request, merchants),
        );
        return accountOf(merchants, updated);
      },
    );

    app.post(
      '/account/webhook-secret/rotate',
      {
        config: { auth: 'merchant' },
        // A rotation needs nothing more: a POST without a body is one with the defaults.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          tags: ['Account'],
          operationId: 'rotateWebhookSecret',
          summary: 'Replace your webhook signing secret',
          description: `The new secret is in this answer only; it signs every webhook from now on (the service’s other processes within ${CACHE_SECONDS} s). Older secrets keep signing beside it for \`overlapSeconds\`, so that your receiver can switch while both verify; 0 stops them at once, after a leak. Takes no \`Idempotency-Key\`: the secret is never kept where an answer could be replayed from, and a retried rotation makes another secret, the one its answer gives. Recorded in the audit trail.`,
          security: BEARER_SECURITY,
          body: Type.Object(
            {
              overlapSeconds: Type.Optional(
                Type.Integer({
                  minimum: 0,
                  maximum: MAX_OVERLAP_SECONDS,
                  default: DEFAULT_OVERLAP_SECONDS,
                  description: 'How long older secrets keep signing: 24 hours unless told.',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              webhookSecret: Type.String({ description: '`whsec_…`: shown this once.' }),
              olderWebhookSecretsUntil: Type.Array(Timestamp, {
                description: 'When each older secret stops signing, soonest first; empty when none does.',
              }),
            }),
            ...errorResponses(COMMON_POST_ERRORS),
          },
        },
      },
      async (request) => {
        const { id } = merchantOf(request);
        const webhookSecret = await merchants.rotateWebhookSecret(id, await actorOf(request, merchants), {
          overlapSeconds: request.body.overlapSeconds,
        });
        const olderUntil = await merchants.olderWebhookSecretsUntil(id);
        return {
          webhookSecret,
          olderWebhookSecretsUntil: olderUntil.map((at) => new Date(at).toISOString()),
        };
      },
    );
  };
