import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { randomToken } from '../../ids.js';

/** Request ids are ours (`req_…`), never taken from the client, and echoed in `Request-Id`. */
export function newRequestId(): string {
  return `req_${randomToken(16)}`;
}

/**
 * Every answer carries its request id; `Cache-Control: no-store` unless its route says otherwise (the SDK
 * and the checkout's hashed assets do): answers to a key or a shopper token hold orders, wallets and
 * addresses, which no browser or proxy cache may keep; and `X-Content-Type-Options: nosniff`, so that a
 * browser runs or styles with nothing whose type does not say it is a script or a style sheet.
 */
export const requestIdPlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onRequest', async (request, reply) => {
    reply
      .header('request-id', request.id)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff');
  });
});
