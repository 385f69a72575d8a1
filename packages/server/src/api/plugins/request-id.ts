import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { randomToken } from '../../ids.js';

/** Request ids are ours (`req_…`), never taken from the client, and echoed in `Request-Id`. */
export function newRequestId(): string {
  return `req_${randomToken(16)}`;
}

export const requestIdPlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('request-id', request.id);
  });
});
