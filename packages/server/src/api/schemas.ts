import { type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from '../errors.js';

export const ErrorBody = Type.Object(
  {
    errorCode: Type.String({ description: 'Stable UPPER_SNAKE code; see docs/errors.md.' }),
    errorMessage: Type.String({ description: 'What went wrong and why, naming the field for bad input.' }),
  },
  { $id: 'ErrorBody', description: 'Every failure of the API has this body (interface section 2.4).' },
);

/** A time in the API: RFC 3339 in UTC, e.g. `2026-11-26T06:00:00.000Z`. */
export const Timestamp = Type.String({ format: 'date-time' });

/**
 * The query of a list route: its filters and `limit` (1 to 100, default 20). An unknown parameter
 * (`offset`, `page`, `cursor`…) is refused rather than ignored.
 */
export const ListQuery = <T extends TProperties>(properties: T) =>
  Type.Object(
    { ...properties, limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })) },
    { additionalProperties: false },
  );

/** `createdSince` and `createdBefore`: the time window of a list route's query. */
export const CreatedWindow = {
  createdSince: Type.Optional(
    Type.String({ format: 'date-time', description: 'Created at or after this time.' }),
  ),
  createdBefore: Type.Optional(
    Type.String({ format: 'date-time', description: 'Created before this time.' }),
  ),
};

/** A query's `CreatedWindow` in ms since the epoch, as the list filters take it; absent bounds stay absent. */
export function createdWindow(query: { createdSince?: string; createdBefore?: string }): {
  createdSince?: number;
  createdBefore?: number;
} {
  const { createdSince, createdBefore } = query;
  return {
    ...(createdSince === undefined ? {} : { createdSince: Date.parse(createdSince) }),
    ...(createdBefore === undefined ? {} : { createdBefore: Date.parse(createdBefore) }),
  };
}

/** One of `values`, as a union of literals: the document lists them, and the type is their union. */
export const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)));

/** `startingAfter`: the id of the last item of the previous page, as a list route takes it. */
export const StartingAfter = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 64, description }));

/** A page of a list route: `data`, newest first, and whether more match beyond it. */
export const Page = <T extends TSchema>(item: T, items: string) =>
  Type.Object({
    data: Type.Array(item),
    hasMore: Type.Boolean({
      description: `Whether more ${items} match beyond this page: ask again with \`startingAfter\`.`,
    }),
  });

export const Acknowledgement = Type.Object(
  {
    code: Type.Integer({ description: '200 on success.', examples: [200] }),
    message: Type.String({ description: 'Textual status.', examples: ['OK'] }),
  },
  { description: 'Success acknowledgement (interface section 2.3).' },
);

/** Codes every route can answer with: a fault of ours, or a database it cannot reach for now. */
const ALWAYS_POSSIBLE: ErrorCode[] = ['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];

/** Failure responses of a route, grouped by HTTP status, each listing its error codes for the OpenAPI document. */
export function errorResponses(codes: ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ...ALWAYS_POSSIBLE])) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      Type.Ref(ErrorBody, {
        description: list.map((code) => `\`${code}\`: ${ERROR_DESCRIPTIONS[code]}`).join('\n\n'),
      }),
    ]),
  );
}

/** Codes every authenticated JSON POST can answer with. */
export const COMMON_POST_ERRORS: ErrorCode[] = [
  'VALIDATION_ERROR',
  'INVALID_JSON',
  'UNAUTHORIZED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'IDEMPOTENCY_KEY_REUSED',
  'IDEMPOTENCY_REQUEST_IN_PROGRESS',
];

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Makes the POST safe to retry: the same key and body replay the first answer for 24 hours. Printable ASCII without spaces (a UUID, say).',
    }),
  ),
});

export const Money = Type.Integer({
  minimum: 1,
  maximum: 99_999_999,
  description: 'Integer number of cents, from 1 to 99,999,999 ($999,999.99).',
});

export const Currency = Type.String({
  maxLength: 16,
  description: 'ISO 4217 code; USD is the supported value.',
  examples: ['USD'],
});

export const BEARER_SECURITY = [{ apiKey: [] }];
