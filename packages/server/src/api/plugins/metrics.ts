import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { type Metrics, UNMATCHED_ROUTE } from '../../metrics.js';

/** Counts every answered request and its latency, by method, route template and status. */
export const metricsPlugin = fp(async (app: FastifyInstance, options: { metrics: Metrics }) => {
  const { metrics } = options;
  app.addHook('onResponse', (request, reply, done) => {
    metrics.request(
      request.method,
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
});
