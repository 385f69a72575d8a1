import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { UnauthorizedError } from '../../errors.js';
import type { Merchant } from '../../merchants/types.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: Merchant | undefined;
  }
  interface FastifyContextConfig {
    /** `merchant`: the route needs `Authorization: Bearer <apiKey>`. */
    auth?: 'merchant';
  }
}

export interface Authenticator {
  authenticate(apiKey: string): Promise<Merchant | undefined>;
}

const BEARER = /^Bearer ([A-Za-z0-9_]{1,200})$/i;

/** The authenticated merchant of a route declared with `config: { auth: 'merchant' }`. */
export function merchantOf(request: FastifyRequest): Merchant {
  if (!request.merchant) throw new UnauthorizedError();
  return request.merchant;
}

export const authPlugin = fp(async (app: FastifyInstance, options: { merchants: Authenticator }) => {
  app.decorateRequest('merchant', undefined);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.auth !== 'merchant') return;
    const header = request.headers.authorization;
    if (!header) throw new UnauthorizedError('The Authorization header is missing; send "Bearer <apiKey>".');
    const match = BEARER.exec(header);
    if (!match?.[1]) throw new UnauthorizedError('The Authorization header must be "Bearer <apiKey>".');
    const merchant = await options.merchants.authenticate(match[1]);
    if (!merchant) throw new UnauthorizedError('The API key is unknown or revoked.');
    request.merchant = merchant;
  });
});
