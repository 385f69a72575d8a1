/**
 * The sandbox gateway's HTTP server: one authorization API in two styles, JSON at `/v1/authorizations`
 * and XML at `/xml/authorizations`, and in each the look-up of an authorization by its idempotency key.
 * Stateless apart from the in-memory records in `records.ts`.
 */
import { createHash } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { authorize } from './authorize.js';
import { jsonStyle } from './json-style.js';
import { type AuthorizationRequest, type ErrorAnswer, RequestError, type ResponseStyle } from './model.js';
import { CryptogramLedger, IdempotencyRecords } from './records.js';
import { xmlStyle } from './xml-style.js';

export interface SandboxGatewayOptions {
  /** 0 picks a free port. */
  port: number;
  host: string;
  /** Log one line per request (method, URL, status, time; never bodies or headers). Off by default. */
  log?: boolean;
}

export interface SandboxGateway {
  /** Base URL, such as `http://127.0.0.1:4010`. */
  url: string;
  close(): Promise<void>;
}

/** 64 KiB: an authorization request is under 2 KiB in either style. */
const BODY_LIMIT_BYTES = 64 * 1024;
/** 255: Stripe's limit, long enough for any UUID or prefixed id a client makes up. */
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Status by kind of error answer; authorizations themselves are 201 whatever was decided. */
const ERROR_STATUS: Record<ErrorAnswer['type'], number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  idempotency_error: 409,
  api_error: 500,
};

/** Codes for the framework's own refusals; any other 4xx of its is a body that could not be read. */
const FRAMEWORK_ERROR_CODES: Record<number, string> = {
  413: 'body_too_large',
  415: 'unsupported_media_type',
};

function sendError(
  reply: FastifyReply,
  style: ResponseStyle,
  error: ErrorAnswer,
  status?: number,
): FastifyReply {
  return reply
    .code(status ?? ERROR_STATUS[error.type])
    .type(style.contentType)
    .send(style.renderError(error));
}

/**
 * The merchant account a request acts for: any bearer key is accepted, and only keeps one account's
 * idempotency keys apart from another's. Held as a hash, so no key stays in memory.
 */
function accountOf(request: FastifyRequest): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  return match?.[1] && createHash('sha256').update(match[1]).digest('hex');
}

const MISSING_API_KEY: ErrorAnswer = {
  type: 'authentication_error',
  code: 'missing_api_key',
  message: 'Send your API key as "Authorization: Bearer <key>"; the sandbox accepts any key.',
  param: null,
};

function authorizationRoute(
  style: ResponseStyle,
  records: { idempotency: IdempotencyRecords; cryptograms: CryptogramLedger },
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const account = accountOf(request);
    if (!account) return sendError(reply, style, MISSING_API_KEY);
    const key = request.headers['idempotency-key'];
    if (
      key !== undefined &&
      (typeof key !== 'string' || !/^[\x21-\x7e]+$/.test(key) || key.length > MAX_IDEMPOTENCY_KEY_LENGTH)
    ) {
      return sendError(reply, style, {
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        message: `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters, without spaces`,
        param: 'Idempotency-Key',
      });
    }
    let authorizationRequest: AuthorizationRequest;
    try {
      authorizationRequest = style.readRequest(request.body);
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      return sendError(reply, style, {
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        message: error.message,
        param: error.param,
      });
    }
    // From here to the end nothing awaits, so two requests with one key cannot both miss the record.
    const now = new Date();
    const fingerprint = createHash('sha256')
      .update(style.contentType)
      .update(JSON.stringify(authorizationRequest))
      .digest('hex');
    const previous = key
      ? records.idempotency.lookup(account, key, fingerprint, now.getTime())
      : { kind: 'new' as const };
    if (previous.kind === 'conflict') {
      return sendError(reply, style, {
        type: 'idempotency_error',
        code: 'idempotency_key_reused',
        message: 'This Idempotency-Key was used with a different request; use a new key for a new request.',
        param: 'Idempotency-Key',
      });
    }
    if (previous.kind === 'replay') {
      return reply
        .code(previous.answer.statusCode)
        .type(style.contentType)
        .header('idempotent-replayed', 'true')
        .send(previous.answer.body);
    }
    const authorization = authorize(authorizationRequest, { now, cryptograms: records.cryptograms });
    const body = style.renderAuthorization(authorization);
    if (key) {
      const answer = { fingerprint, contentType: style.contentType, statusCode: 201, body };
      records.idempotency.store(account, key, answer, now.getTime());
    }
    return reply.code(201).type(style.contentType).send(body);
  };
}

/**
 * The authorization made with an `Idempotency-Key` in the last 24 hours, in this style, as it was first
 * answered: how a client whose answer was lost learns what was decided without sending the request
 * again. 404 `not_found` when there is none: nothing was decided for the key, so nothing was charged.
 */
function lookupRoute(style: ResponseStyle, records: { idempotency: IdempotencyRecords }) {
  return async (request: FastifyRequest<{ Params: { key: string } }>, reply: FastifyReply) => {
    const account = accountOf(request);
    if (!account) return sendError(reply, style, MISSING_API_KEY);
    const answer = records.idempotency.find(account, request.params.key, Date.now());
    if (!answer) {
      return sendError(
        reply,
        style,
        {
          type: 'invalid_request_error',
          code: 'authorization_not_found',
          message:
            'No authorization was made with this Idempotency-Key in the last 24 hours (since this gateway started).',
          param: 'Idempotency-Key',
        },
        404,
      );
    }
    if (answer.contentType !== style.contentType) {
      return sendError(reply, style, {
        type: 'idempotency_error',
        code: 'idempotency_key_other_style',
        message: 'This Idempotency-Key was used in the other style; look it up there.',
        param: 'Idempotency-Key',
      });
    }
    return reply
      .code(answer.statusCode)
      .type(style.contentType)
      .header('idempotent-replayed', 'true')
      .send(answer.body);
  };
}

function styleOf(url: string): ResponseStyle {
  return url.startsWith('/xml/') ? xmlStyle : jsonStyle;
}

function buildSandboxGateway(options: { log?: boolean } = {}): FastifyInstance {
  // A look-up carries the key in its path: room for the longest key an authorization takes.
  const app = Fastify({
    logger: options.log ?? false,
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: MAX_IDEMPOTENCY_KEY_LENGTH * 3 },
  });
  const records = { idempotency: new IdempotencyRecords(), cryptograms: new CryptogramLedger() };

  app.addContentTypeParser(['application/xml', 'text/xml'], { parseAs: 'string' }, (_request, body, done) =>
    done(null, body),
  );

  app.post('/v1/authorizations', authorizationRoute(jsonStyle, records));
  app.post('/xml/authorizations', authorizationRoute(xmlStyle, records));
  app.get('/v1/authorizations/by-idempotency-key/:key', lookupRoute(jsonStyle, records));
  app.get('/xml/authorizations/by-idempotency-key/:key', lookupRoute(xmlStyle, records));
  app.get('/health', async () => ({ status: 'ok' }));

  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      styleOf(request.url),
      {
        type: 'invalid_request_error',
        code: 'not_found',
        message: `No route ${request.method} ${request.url}; try POST /v1/authorizations or POST /xml/authorizations.`,
        param: null,
      },
      404,
    ),
  );

  // Fastify's own refusals (bad JSON, wrong media type, body too large) in the route's style.
  app.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
    const style = styleOf(request.url);
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      request.log.error(error);
      return sendError(reply, style, {
        type: 'api_error',
        code: 'internal_error',
        message: 'The sandbox gateway failed; its log says why.',
        param: null,
      });
    }
    return sendError(
      reply,
      style,
      {
        type: 'invalid_request_error',
        code: FRAMEWORK_ERROR_CODES[status] ?? 'invalid_body',
        message: error.message,
        param: null,
      },
      status,
    );
  });

  return app;
}

export async function startSandboxGateway(options: SandboxGatewayOptions): Promise<SandboxGateway> {
  const app = buildSandboxGateway({ log: options.log ?? false });
  const url = await app.listen({ port: options.port, host: options.host });
  return { url, close: () => app.close() };
}
