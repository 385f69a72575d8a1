import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type Db, ping } from '../db/index.js';
import { sendError } from './plugins/errors.js';
import { errorResponses } from './schemas.js';

export const healthRoute =
  (db: Db): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/healthz',
      {
        logLevel: 'warn',
        schema: {
          tags: ['Operations'],
          operationId: 'checkHealth',
          summary: 'Health check',
          description: 'Answers 200 when the service can reach its database, 503 otherwise.',
          response: {
            200: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }),
            ...errorResponses(['SERVICE_UNAVAILABLE']),
          },
        },
      },
      async (_request, reply) => {
        if (await ping(db)) return { status: 'ok' as const, database: 'ok' as const };
        return sendError(reply, 'SERVICE_UNAVAILABLE', 'The database cannot be reached.');
      },
    );
  };
