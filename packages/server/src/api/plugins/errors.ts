import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { DomainError, ERROR_STATUS, type ErrorCode } from '../../errors.js';
import { FailureLog } from '../../failure-log.js';
import { scrub, scrubValues } from '../../log.js';
import { describeValidationError } from '../validation.js';
import { newRequestId } from './request-id.js';

export interface ErrorBody {
  errorCode: ErrorCode;
  errorMessage: string;
}

/** Framework errors a client can cause, mapped to our codes. Anything else from Fastify below 500 is VALIDATION_ERROR. */
const FRAMEWORK_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_ERROR',
};

function frameworkMessage(code: ErrorCode, error: FastifyError): string {
  switch (code) {
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 'Send the body as JSON with Content-Type: application/json.';
    case 'PAYLOAD_TOO_LARGE':
      return 'The body is larger than the service accepts.';
    case 'INVALID_JSON':
      return error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
        ? 'The body is empty; send a JSON object.'
        : 'The body is not valid JSON.';
    default:
      return scrub(error.message);
  }
}

/**
 * 5 s: when a 503 says nothing more precise. A restart or a failover of the database, or a lock released,
 * is usually over by then, and so is a mail server's refusal to take a message for now.
 */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

declare module 'fastify' {
  interface FastifyInstance {
    databaseFailures: FailureLog;
  }
}

/**
 * Sends the error body. Card numbers and keys are taken out of its message: many name what the client
 * sent (an unknown `sessionId`, a path), and a client may send one in any of them.
 */
export function sendError(reply: FastifyReply, code: ErrorCode, message: string): FastifyReply {
  const body: ErrorBody = { errorCode: code, errorMessage: scrubValues(message) };
  const status = ERROR_STATUS[code];
  // Every 503 says when to ask again.
  if (status === 503 && !reply.hasHeader('retry-after')) {
    reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  }
  return reply.status(status).type('application/json').send(body);
}

function handle(
  error: FastifyError & { validation?: ErrorObject[] },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (error instanceof DomainError) {
    // The service failed, not the request: logged with the request id the answer carries, and the cause.
    if (error.status >= 500) {
      request.log[error.status === 503 ? 'warn' : 'error'](
        { err: error.cause ?? error, errorCode: error.errorCode },
        `answered ${error.status} ${error.errorCode}`,
      );
    }
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    return sendError(reply, error.errorCode, error.message);
  }
  if (error.validation) {
    const message =
      error.validationContext === 'body' && request.body === undefined
        ? 'body is required: send a JSON object with Content-Type: application/json'
        : describeValidationError(error.validation, error.validationContext);
    return sendError(reply, 'VALIDATION_ERROR', message);
  }
  const known = error.code ? FRAMEWORK_CODES[error.code] : undefined;
  if (known) return sendError(reply, known, frameworkMessage(known, error));
  if (error instanceof SyntaxError) return sendError(reply, 'INVALID_JSON', 'The body is not valid JSON.');
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return sendError(reply, 'VALIDATION_ERROR', scrub(error.message));
  return reply.type('application/json').send(unexpectedError(error, request, reply));
}

/**
 * The answer to an error no route expected, logged in full: 503 with Retry-After when the database
 * cannot be reached, else 500. Sets the reply's status; the caller sends the body.
 */
export function unexpectedError(error: unknown, request: FastifyRequest, reply: FastifyReply): ErrorBody {
  // The driver's message goes to the log only: it may name hosts, files or SQL.
  if (isDatabaseUnavailable(error)) {
    request.server.databaseFailures.failed(
      error,
      'the database could not be reached; answered 503',
      {},
      request.log,
    );
    reply
      .status(ERROR_STATUS.SERVICE_UNAVAILABLE)
      .header('retry-after', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return {
      errorCode: 'SERVICE_UNAVAILABLE',
      errorMessage: 'The service cannot reach its database at the moment; try again in a few seconds.',
    };
  }
  request.log.error({ err: error }, 'unhandled error');
  reply.status(ERROR_STATUS.INTERNAL_ERROR);
  return {
    errorCode: 'INTERNAL_ERROR',
    errorMessage: `Unexpected error; quote request id ${request.id} to support.`,
  };
}

/**
 * For Fastify's `frameworkErrors` option: the errors its router raises before any route or hook, for a
 * URL it cannot decode or a path parameter over its length limit.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error.code === 'FST_ERR_BAD_URL') {
    return sendError(reply, 'VALIDATION_ERROR', 'the URL path is not validly percent-encoded');
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendError(reply, 'VALIDATION_ERROR', 'a path parameter of the URL is too long');
  }
  return handle(error, request, reply);
}

/**
 * For Fastify's `clientErrorHandler` option: a request Node's HTTP parser refused (not HTTP, a broken
 * chunk, conflicting lengths, headers over Node's limit) gets the error body too, then the connection
 * closes, since what follows on it cannot be trusted. It has a `Request-Id` like every answer. Ended rather than destroyed: a request whose body
 * the parser refused mid-way then ends too, through the error handler, where after a destroyed socket
 * it waited for the rest of its body for good and a stop waited for it (see in-flight.ts).
 */
export function clientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [code, message]: [ErrorCode, string] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['HEADERS_TOO_LARGE', 'The request headers are larger than the service accepts.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['REQUEST_TIMEOUT', 'The request did not arrive whole in time; send it again.']
        : ['VALIDATION_ERROR', `The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}).`];
  const body = JSON.stringify({ errorCode: code, errorMessage: message } satisfies ErrorBody);
  const status = ERROR_STATUS[code];
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nRequest-Id: ${newRequestId()}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** A route's URL as a pattern for concrete paths: `:name` is one segment, `*` the rest. */
function pathPattern(url: string): RegExp {
  const source = url
    .split(/(:[^/]+|\*)/)
    .map((part) => {
      if (part === '*') return '.*';
      if (part.startsWith(':')) return '[^/]+';
      return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}/?$`);
}

/**
 * Every failure leaves as `{ errorCode, errorMessage }`, unknown routes included. A path that is served,
 * but not for the request's method, answers 405 with the methods it has in `Allow`.
 */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  const failures = new FailureLog(app.log);
  app.decorate('databaseFailures', failures);
  app.addHook('onClose', (_instance, done) => {
    failures.flush();
    done();
  });
  const routes: { path: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    routes.push({ path: pathPattern(route.url), methods: [route.method].flat() });
  });
  app.setErrorHandler(handle);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] as string;
    const allowed = [...new Set(routes.filter((route) => route.path.test(path)).flatMap((r) => r.methods))];
    // A route that takes the method and still found nothing (a file that is not there): not found.
    if (allowed.length === 0 || allowed.includes(request.method)) {
      return sendError(reply, 'NOT_FOUND', `No route ${request.method} ${path}.`);
    }
    reply.header('allow', allowed.join(', '));
    return sendError(
      reply,
      'METHOD_NOT_ALLOWED',
      `${path} does not take ${request.method}; it takes ${allowed.join(', ')}.`,
    );
  });
});
