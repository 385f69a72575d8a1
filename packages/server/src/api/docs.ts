import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ErrorBody } from './schemas.js';
import { WEBHOOK_DOCS } from './webhook-docs.js';

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
            'Merchant API of Wallet Checkout. Authenticate with `Authorization: Bearer <apiKey>`. Every failure has the body `{ errorCode, errorMessage }`; every response carries a `Request-Id` header. POSTs accept an `Idempotency-Key` header.',
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
        },
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) || `def-${i}`,
      },
    });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true },
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
);
