import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../../errors.js';
import type { Merchant } from '../../merchants/types.js';
import { merchantOf } from '../plugins/auth.js';
import type { IdempotencyContext } from '../plugins/idempotency.js';
import { BEARER_SECURITY, COMMON_POST_ERRORS, errorResponses, IdempotencyHeaders } from '../schemas.js';

/**
 * A POST of the credentials flow, served at `/payments/<name>` and at the singular `/payment/<name>`
 * the interface's prose uses (hidden from the API reference, so only the plural has an `operationId`).
 * Both take the merchant's API key and an `Idempotency-Key`, and answer 200 with `answer` or an error of
 * `errors` (besides the common ones).
 */
export function credentialsFlowRoute<Body extends TObject, Answer extends TSchema>(spec: {
  name: string;
  operationId: string;
  summary: string;
  description: string;
  body: Body;
  answer: Answer;
  errors: ErrorCode[];
  handle(
    merchant: Merchant,
    body: Static<Body>,
    idempotency: IdempotencyContext | undefined,
  ): Promise<Static<Answer>>;
}): FastifyPluginAsyncTypebox {
  const [plural, singular] = [`/payments/${spec.name}`, `/payment/${spec.name}`];
  return async (app) => {
    for (const url of [plural, singular]) {
      app.post(
        url,
        {
          config: { auth: 'merchant', idempotent: `payments.${spec.name}` },
          schema: {
            hide: url === singular,
            operationId: url === plural ? spec.operationId : undefined,
            tags: ['Credentials flow'],
            summary: spec.summary,
            description: `${spec.description} Also served at \`${singular}\`.`,
            security: BEARER_SECURITY,
            headers: IdempotencyHeaders,
            body: spec.body,
            // `handle` types the body and the answer: the provider cannot resolve generic schemas.
            response: {
              200: spec.answer as TSchema,
              ...errorResponses([...COMMON_POST_ERRORS, ...spec.errors]),
            },
          },
        },
        async (request) =>
          spec.handle(merchantOf(request), request.body as Static<Body>, request.idempotency),
      );
    }
  };
}
