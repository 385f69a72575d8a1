import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { DomainError, ERROR_STATUS, ValidationError } from '../../errors.js';
import type { IdempotencyStore, StoredResponse } from '../../idempotency/store.js';
import { type ErrorBody, unexpectedError } from './errors.js';
import { headerCount } from './input.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: IdempotencyContext | undefined;
  }
  interface FastifyContextConfig {
    /**
     * The route honours `Idempotency-Key` (every POST of the merchant API). The value names the operation,
     * the same for every path that serves it (the plural and singular spellings of the credentials flow),
     * so a retry by either path is the same request.
     */
    idempotent?: string;
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

/** The operation, its path parameters and its body; bodies are at most MAX_BODY_DEPTH deep (json-body.ts). */
function fingerprintOf(operation: string, request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${operation}\n${canonical(request.params)}\n${canonical(request.body)}`)
    .digest('base64url');
}

/**
 * The fingerprint as versions from before 2026-11-22 saved it: the method and the path as sent, and the
 * body. Their keys stay for 24 hours, so a retry that reaches the next version after an upgrade (or a
 * process of it beside them during a rolling one) must still find its first answer, not a 409 that
 * tells the merchant to send it again under a new key.
 */
function legacyFingerprintOf(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url.split('?')[0]}\n${canonical(request.body)}`)
    .digest('base64url');
}

/** Whether the saved answer is this request's: the same operation, parameters and body. */
function sameRequest(stored: StoredResponse, fingerprint: string, request: FastifyRequest): boolean {
  return stored.fingerprint === fingerprint || stored.fingerprint === legacyFingerprintOf(request);
}

const IN_PROGRESS = 'IDEMPOTENCY_REQUEST_IN_PROGRESS';

/**
 * Whether an answer of this status is saved under its key, to be replayed. Not a 5xx, which a retry may
 * get past; not a 400, which answers what the request said, not what the service did (the same key may
 * send it mended); not a 429, which did nothing (the same key, sent once the limit allows, runs).
 */
export function isKeptStatus(status: number): boolean {
  return status < 500 && status !== 400 && status !== 429;
}

/**
 * Sets the reply's status and headers for the saved first answer, or for the refusal of a key that was
 * used with a different request, and returns the body to send.
 */
function storedAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  stored: StoredResponse,
  fingerprint: string,
): string {
  reply.type('application/json; charset=utf-8');
  if (sameRequest(stored, fingerprint, request)) {
    reply.status(stored.status).header('idempotent-replayed', 'true');
    return stored.body;
  }
  const body: ErrorBody = {
    errorCode: 'IDEMPOTENCY_KEY_REUSED',
    errorMessage:
      'This Idempotency-Key was used with a different request (another body, path or operation); use a new key for a new request.',
  };
  reply.status(ERROR_STATUS.IDEMPOTENCY_KEY_REUSED);
  return JSON.stringify(body);
}

/**
 * Stripe's semantics: the same key and body replay the first answer and do nothing twice; the same key
 * with another body or path is a 409; a request still in flight with the same key is a 409. Keys are
 * scoped per merchant and kept 24 hours. Answers of 400, 429 and 5xx are not saved, so a retry runs again.
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance, options: { store: IdempotencyStore }) => {
  const inFlight = new Set<string>();
  const release = (context: IdempotencyContext) => inFlight.delete(`${context.merchantId}\n${context.key}`);
  app.decorateRequest('idempotency', undefined);

  // Before the headers' schema: Node joins repeated headers with ", ", which would read as one longer key.
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.config.idempotent === undefined) return;
    const count = headerCount(request, 'idempotency-key');
    if (count > 1) throw new ValidationError(`header Idempotency-Key must be sent once, not ${count} times`);
  });

  app.addHook('preHandler', async (request, reply) => {
    const operation = request.routeOptions.config.idempotent;
    if (operation === undefined || !request.merchant) return;
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw new ValidationError(
        'header Idempotency-Key must be 1 to 255 printable ASCII characters, without spaces',
      );
    }
    const merchantId = request.merchant.id;
    const slot = `${merchantId}\n${key}`;
    const fingerprint = fingerprintOf(operation, request);
    if (inFlight.has(slot)) {
      // The request holding the key may itself be a repeat of one that finished: then so is this one.
      const stored = await options.store.find(merchantId, key);
      if (stored) return reply.send(storedAnswer(request, reply, stored, fingerprint));
      throw new DomainError(IN_PROGRESS, 'A request with this Idempotency-Key is still in progress.');
    }
    inFlight.add(slot);
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
    return reply.send(storedAnswer(request, reply, stored, fingerprint));
  });

  // The key is free again once the answer is saved, here, whether or not the client is still there to
  // receive it: a retry then replays it. (onResponse alone never comes for a client that hung up.)
  app.addHook('onSend', async (request, reply, payload) => {
    const context = request.idempotency;
    if (!context) return payload;
    try {
      // Another process saved an answer under this key while this request ran: that request has
      // finished, so its answer is this one's too, and every client that sent the key gets the same.
      const answerSavedElsewhere = async () => {
        const stored = await options.store.find(context.merchantId, context.key);
        return stored && storedAnswer(request, reply, stored, context.fingerprint);
      };
      if (reply.statusCode === 409 && String(payload).includes(`"${IN_PROGRESS}"`)) {
        const answer = await answerSavedElsewhere();
        if (answer !== undefined) return answer;
      }
      const conflict = reply.statusCode === 409 && String(payload).includes('"IDEMPOTENCY_');
      const kept = isKeptStatus(reply.statusCode) && !conflict;
      if (!context.recorded && kept && typeof payload === 'string') {
        const saved = await options.store.saveAlone({ ...context, status: reply.statusCode, body: payload });
        if (!saved) return (await answerSavedElsewhere()) ?? payload;
      }
    } catch (error) {
      // An answer that could not be kept is not given: the same key, sent again, gets it once it can be.
      return JSON.stringify(unexpectedError(error, request, reply));
    } finally {
      release(context);
    }
    return payload;
  });
  // For an answer that never reaches onSend, such as a failed save above.
  app.addHook('onResponse', async (request) => {
    if (request.idempotency) release(request.idempotency);
  });
});
