import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { METHOD_NOT_ALLOWED_RESPONSE, RESPONSE_HEADERS, withResponseHeaders } from './header-docs.js';
import { ErrorBody } from './schemas.js';
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

/** The OpenAPI document is generated from the route schemas: served as `/openapi.json`, browsable at `/docs`. */
export const docsPlugin = fp(
  async (app: FastifyInstance, options: { publicUrl: string; version: string }) => {
    app.addSchema(ErrorBody);
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Wallet Checkout API',
          version: options.version,
          description:
            'Merchant API of Wallet Checkout. Authenticate with `Authorization: Bearer <apiKey>`. Every failure has the body `{ errorCode, errorMessage }`; every response carries a `Request-Id` header. POSTs accept an `Idempotency-Key` header; an answer replayed for one carries `Idempotent-Replayed: true`. A path sent a method it does not take answers 405 `METHOD_NOT_ALLOWED` with an `Allow` header listing the methods it takes (`components.responses.MethodNotAllowed`).',
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
