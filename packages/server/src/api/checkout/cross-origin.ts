import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../errors.js';
import type { Merchant } from '../../merchants/types.js';

/** 2 h: Chromium's cap on caching a preflight answer (Firefox allows 24 h). */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/**
 * CORS for the endpoints the SDK calls from the merchant's page. A preflight carries no body, so it
 * cannot name the merchant: it is answered for any origin, and the origin is checked on the request
 * itself (`merchantForOrigin`), which refuses with 403 before anything is created. Every answer
 * reflects the page's origin (never `*`, never credentials), so the SDK can read a refusal's reason;
 * the answers that carry data are only ever produced for an allowed origin.
 */
export function allowCrossOrigin(app: FastifyInstance, url: string): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const origin = request.headers.origin;
    if (typeof origin === 'string') {
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', 'request-id, retry-after');
    }
    reply.header('vary', 'Origin');
    return payload;
  });
  app.options(url, { schema: { hide: true } }, async (_request, reply) =>
    reply
      .status(204)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'content-type')
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
      .send(),
  );
}

/**
 * The merchant named in the body, if the request comes from one of its allowed origins. A missing
 * origin, an origin the merchant has not allowed and an unknown merchant are all ORIGIN_NOT_ALLOWED, so
 * the answer does not tell whether a merchant id exists.
 */
export async function merchantForOrigin(
  merchants: { get(id: string): Promise<Merchant | undefined> },
  merchantId: string,
  origin: string | undefined,
): Promise<{ merchant: Merchant; origin: string }> {
  if (!origin) {
    throw new DomainError(
      'ORIGIN_NOT_ALLOWED',
      "The request has no Origin header; call this endpoint from a page on one of the merchant's allowed origins.",
    );
  }
  const merchant = await merchants.get(merchantId);
  if (!merchant?.allowedOrigins.includes(origin)) {
    throw new DomainError(
      'ORIGIN_NOT_ALLOWED',
      `Origin ${origin} is not an allowed origin of merchant ${merchantId}; check that the merchant id is yours, and add the origin to its allowed origins.`,
    );
  }
  return { merchant, origin };
}
