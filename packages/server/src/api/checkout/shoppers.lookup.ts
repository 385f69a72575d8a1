import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Merchant } from '../../merchants/types.js';
import type { Shopper } from '../../wallet/index.js';
import { errorResponses } from '../schemas.js';
import { allowCrossOrigin, merchantForOrigin } from './cross-origin.js';

/** `guestRedirect(email)` in the SDK: does this email have a wallet? Answered to allowed origins only. */
export const shopperLookupRoute =
  (deps: {
    merchants: { get(id: string): Promise<Merchant | undefined> };
    wallet: { findShopperByEmail(email: string): Promise<Shopper | undefined> };
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    allowCrossOrigin(app, '/checkout/shoppers/lookup');
    app.post(
      '/checkout/shoppers/lookup',
      {
        schema: {
          tags: ['Browser SDK'],
          summary: 'Tell whether an email has a wallet (called by the SDK from the merchant page)',
          description:
            "No API key: the request's `Origin` must be one of the merchant's allowed origins, else 403 `ORIGIN_NOT_ALLOWED`.",
          body: Type.Object({
            merchantId: Type.String({ minLength: 1, maxLength: 64 }),
            email: Type.String({
              maxLength: 254,
              pattern: '^[^@\\s]+@[^@\\s]+$',
              description: 'An e-mail address.',
            }),
          }),
          response: {
            200: Type.Object({ known: Type.Boolean({ description: 'True when the email has a wallet.' }) }),
            ...errorResponses([
              'VALIDATION_ERROR',
              'INVALID_JSON',
              'UNSUPPORTED_MEDIA_TYPE',
              'PAYLOAD_TOO_LARGE',
              'ORIGIN_NOT_ALLOWED',
            ]),
          },
        },
      },
      async (request) => {
        await merchantForOrigin(deps.merchants, request.body.merchantId, request.headers.origin);
        return { known: (await deps.wallet.findShopperByEmail(request.body.email)) !== undefined };
      },
    );
  };
