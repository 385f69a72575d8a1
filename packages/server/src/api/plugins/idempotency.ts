import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { DomainError, ValidationError } from '../../errors.js';
import type { IdempotencyStore, StoredResponse } from '../../idempotency/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyContext | undefined;
  }
  interface FastifyContextConfig {
    /** The route honours `Idempotency-Key` (every POST of the merchant API). */
    idempotent?: boolean;
  }
}

/**
 * What a handler needs to save its answer atomically with its side effect: `response()` builds the row
 * to write in the same transaction, and marks the answer as saved so the plugin does not save it again.
 */
export interface IdempotencyContext {
  merchantId: string;
  key: string;
  fingerprint: string;
  recorded: boolean;
  response(status: number, body: unknown): StoredResponse;
}

const KEY = /^[\x21-\x7e]{1,255}$/;

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function fingerprintOf(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url.split('?')[0]}\n${canonical(request.body)}`)
    .digest('base64url');
}

/**
 * Stripe's semantics: the same key and body replay the first answer and do nothing twice; the same key
 * with another body or path is a 409; a request still in flight with the same key is a 409. Keys are
 * scoped per merchant and kept 24 hours. Answers of 5xx are not saved, so a retry runs again.
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance, options: { store: IdempotencyStore }) => {
  const inFlight = new Set<string>();
  app.decorateRequest('idempotency', undefined);

  app.addHook('preHandler', async (request, reply) => {
    if (!request.routeOptions.config.idempotent || !request.merchant) return;
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw new ValidationError('header Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    const merchantId = request.merchant.id;
    const slot = `${merchantId}\n${key}`;
    if (inFlight.has(slot)) {
      throw new DomainError(
        'IDEMPOTENCY_REQUEST_IN_PROGRESS',
        'A request with this Idempotency-Key is still in progress.',
      );
    }
    inFlight.add(slot);
    const fingerprint = fingerprintOf(request);
    const context: IdempotencyContext = {
      merchantId,
      key,
      fingerprint,
      recorded: false,
      response(status, body) {
        context.recorded = true;
        return { merchantId, key, fingerprint, status, body: JSON.stringify(body) };
      },
    };
    request.idempotency = context;
    const stored = await options.store.find(merchantId, key);
    if (!stored) return;
    context.recorded = true;
    if (stored.fingerprint !== fingerprint) {
      throw new DomainError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was used with a different request; use a new key for a new request.',
      );
    }
    return reply
      .status(stored.status)
      .header('idempotent-replayed', 'true')
      .type('application/json')
      .send(stored.body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const context = request.idempotency;
    if (!context || context.recorded || reply.statusCode >= 500 || typeof payload !== 'string')
      return payload;
    const conflict = reply.statusCode === 409 && payload.includes('"IDEMPOTENCY_');
    if (!conflict) {
      await options.store.saveAlone({ ...context, status: reply.statusCode, body: payload });
    }
    return payload;
  });

  app.addHook('onResponse', async (request) => {
    const context = request.idempotency;
    if (context) inFlight.delete(`${context.merchantId}\n${context.key}`);
  });
});
