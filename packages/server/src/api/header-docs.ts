import { STATUS_CODES } from 'node:http';
import { ERROR_DESCRIPTIONS } from '../errors.js';
import { isKeptStatus } from './plugins/idempotency.js';

/**
 * The response headers the service sends, for the OpenAPI document: described once in
 * `components.headers`, referred to from every response that carries them, and the 405 every path may
 * answer in `components.responses`, since it is the answer of no operation.
 */

export const RESPONSE_HEADERS = {
  'Request-Id': {
    description: 'The id of this request, on every answer, success or failure: quote it to support.',
    required: true,
    schema: { type: 'string' as const, examples: ['req_3kTMd9Qx0bLw7ZpA'] },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when the answer is the one saved for an earlier request with the same `Idempotency-Key` and body, sent again; absent otherwise.',
    schema: { type: 'string' as const, enum: ['true'] },
  },
  'Retry-After': {
    description:
      'Seconds to wait before trying again: sent with `RATE_LIMITED` and `OTP_THROTTLED`, and with every 503 (`SERVICE_UNAVAILABLE`, `MESSAGE_NOT_SENT`).',
    schema: { type: 'integer' as const, minimum: 0 },
  },
  Allow: {
    description: 'The methods the path takes, comma-separated, e.g. `GET, HEAD`.',
    required: true,
    schema: { type: 'string' as const },
  },
};

type HeaderName = keyof typeof RESPONSE_HEADERS;

const ref = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

export const METHOD_NOT_ALLOWED_RESPONSE = {
  description: `\`METHOD_NOT_ALLOWED\`: ${ERROR_DESCRIPTIONS.METHOD_NOT_ALLOWED} Any path answers it to a method it does not take.`,
  headers: { Allow: ref('Allow'), 'Request-Id': ref('Request-Id') },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
};

/**
 * Whether an answer of this status to a route that takes `Idempotency-Key` may be a replayed one: one the
 * idempotency plugin keeps, but for a 401, 413 or 415, which are given before it reads the key.
 */
const replayable = (status: number) => isKeptStatus(status) && ![401, 413, 415].includes(status);

function headersOf(status: number, idempotent: boolean): Partial<Record<HeaderName, { $ref: string }>> {
  return {
    'Request-Id': ref('Request-Id'),
    ...(idempotent && replayable(status) && { 'Idempotent-Replayed': ref('Idempotent-Replayed') }),
    ...((status === 429 || status === 503) && { 'Retry-After': ref('Retry-After') }),
  };
}

interface OperationDoc {
  parameters?: { in: string; name: string }[];
  responses?: Record<string, { headers?: object; description?: string }>;
}

/** What @fastify/swagger calls a response whose schema has no description. */
const UNDESCRIBED = 'Default Response';

/**
 * Adds to each response of the document's operations the headers the service sends with it, and names
 * a response left undescribed by its status (`OK`, `Created`); the document is @fastify/swagger's, whose
 * operations hold no `$ref` in their parameters or responses.
 */
export function withResponseHeaders<Document extends { paths?: object }>(document: Document): Document {
  const paths = (document.paths ?? {}) as Record<string, Record<string, OperationDoc>>;
  for (const operation of Object.values(paths).flatMap((item) => Object.values(item))) {
    const idempotent = (operation.parameters ?? []).some(
      (parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key',
    );
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      response.headers = { ...response.headers, ...headersOf(Number(status), idempotent) };
      if (response.description === UNDESCRIBED) response.description = STATUS_CODES[status] ?? status;
    }
  }
  return document;
}
