import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { METHOD_NOT_ALLOWED_RESPONSE, RESPONSE_HEADERS, withResponseHeaders } from './header-docs.js';
import { Account } from './merchant/account.js';
import { CredentialsRequestResource } from './merchant/credentials-requests.get.js';
import { CredentialsAcknowledgement, CredentialsRequestBody } from './merchant/payments.credentials.js';
import { ExternalResponseBody } from './merchant/payments.external-response.js';
import { Message, MessageWithAttempts } from './merchant/webhooks.js';
import { Acknowledgement, ErrorBody } from './schemas.js';
import { WEBHOOK_DOCS } from './webhook-docs.js';

/**
 * What `/docs` may load and run: its own files only, never in a frame, and no request to another origin.
 * Swagger UI runs no inline script; it does set inline styles as it renders, which are allowed.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "script-src-attr 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The merchant API's main bodies, named in `components.schemas` so that generated clients name their
 * types. The routes keep the schemas themselves, so validation and serialization are as before: only the
 * document refers to the named copies.
 */
const NAMED_SCHEMAS = new Map<TSchema, string>([
  [CredentialsRequestBody, 'CredentialsRequestInput'],
  [CredentialsAcknowledgement, 'CredentialsAcknowledgement'],
  [ExternalResponseBody, 'ExternalResponseInput'],
  [Acknowledgement, 'Acknowledgement'],
  [CredentialsRequestResource, 'CredentialsRequest'],
  [Message, 'WebhookMessageSummary'],
  [MessageWithAttempts, 'WebhookMessage'],
  [Account, 'Account'],
]);

/**
 * A copy of a route's schema for the document, each named schema in it a `$ref` to its component. The
 * description stays beside the `$ref`: @fastify/swagger takes a response's description from there.
 */
function withNamedSchemas(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const name = NAMED_SCHEMAS.get(schema as TSchema);
  if (name !== undefined) return { $ref: name, description: (schema as TSchema).description };
  if (Array.isArray(schema)) return schema.map(withNamedSchemas);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withNamedSchemas(value)]));
}

/** The OpenAPI document is generated from the route schemas: served as `/openapi.json`, browsable at `/docs`. */
export const docsPlugin = fp(
  async (app: FastifyInstance, options: { publicUrl: string; version: string }) => {
    app.addSchema(ErrorBody);
    for (const [schema, name] of NAMED_SCHEMAS) app.addSchema({ ...schema, $id: name });
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Wallet Checkout API',
          version: options.version,
          description:
            'Merchant API of Wallet Checkout. Authenticate with `Authorization: Bearer <apiKey>`. Every failure has the body `{ errorCode, errorMessage }`; every response carries a `Request-Id` header. POSTs accept an `Idempotency-Key` header (but for `POST /account/webhook-secret/rotate`, whose answer holds a secret); an answer replayed for one carries `Idempotent-Replayed: true`. A path sent a method it does not take answers 405 `METHOD_NOT_ALLOWED` with an `Allow` header listing the methods it takes (`components.responses.MethodNotAllowed`).',
        },
        servers: [{ url: options.publicUrl }],
        webhooks: WEBHOOK_DOCS,
        components: {
          securitySchemes: {
            apiKey: {
              type: 'http',
              scheme: 'bearer',
              description: 'A merchant API key: sk_test_… in staging, sk_live_… in production.',
            },
            shopperToken: {
              type: 'http',
              scheme: 'bearer',
              description:
                'The checkout page’s shopper token from POST /checkout/api/orders/{orderId}/otp/verify.',
            },
          },
          headers: RESPONSE_HEADERS,
          responses: { MethodNotAllowed: METHOD_NOT_ALLOWED_RESPONSE },
        },
      },
      transform: ({ schema, url }) => ({ schema: withNamedSchemas(schema) as FastifySchema, url }),
      transformObject: (document) =>
        'openapiObject' in document ? withResponseHeaders(document.openapiObject) : document.swaggerObject,
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) || `def-${i}`,
      },
    });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      // No validator: Swagger UI would send the document's address to validator.swagger.io.
      uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null },
      staticCSP: DOCS_CSP,
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
);
