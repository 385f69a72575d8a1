import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { DomainError, ValidationError } from '../../errors.js';

/** Deepest nesting a body may have; the API's own bodies are at most four levels deep. */
export const MAX_BODY_DEPTH = 32;

const NUL = '\u0000';
/** A UTF-16 surrogate without its pair: JSON's `\ud800` escapes allow it, UTF-8 (and so storage) cannot hold it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why a parsed JSON body is refused, or undefined. Nested deeper than MAX_BODY_DEPTH: the fingerprint of
 * an idempotent request and the copy of a request to a delivery thread walk a body recursively. A string
 * or field name holding U+0000: PostgreSQL cannot store it in text (SQLite can), so both engines refuse it
 * here alike instead of one of them failing in the database. One holding an unpaired surrogate (`\ud800`):
 * it is not Unicode, each engine stores it mangled in its own way, and a webhook built from the request
 * kept in memory would differ from one built from the row. A field `__proto__`, or `constructor` holding
 * an object: prototype poisoning, which Fastify's parser refuses by default. The walk keeps its own stack,
 * so the body cannot exhaust the call stack before it is refused.
 */
export function bodyProblem(body: unknown): string | undefined {
  const pending: { value: unknown; field: string; depth: number }[] = [{ value: body, field: '', depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, field, depth } = next;
    if (typeof value === 'string') {
      if (value.includes(NUL)) return `${field || 'body'} must not contain the NUL character (U+0000)`;
      if (LONE_SURROGATE.test(value)) {
        return `${field || 'body'} must be valid Unicode: it holds an unpaired surrogate (\\ud800–\\udfff)`;
      }
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth === MAX_BODY_DEPTH) return `body must not be nested more than ${MAX_BODY_DEPTH} levels deep`;
    const list = Array.isArray(value);
    for (const [name, item] of Object.entries(value)) {
      if (name.includes(NUL)) return `${field || 'body'} has a field name with the NUL character (U+0000)`;
      if (LONE_SURROGATE.test(name)) {
        return `${field || 'body'} has a field name that is not valid Unicode (an unpaired surrogate)`;
      }
      const child = list ? `${field}[${name}]` : field ? `${field}.${name}` : name;
      if (name === '__proto__' || (name === 'constructor' && item !== null && typeof item === 'object')) {
        return `${child} is not allowed: a field named ${name} could alter every object of the service`;
      }
      pending.push({ value: item, field: child, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * How many times the request sent a header. Node keeps only the first of a repeated `Authorization` and
 * joins others with ", ", so a header that must be sent once is checked against the raw list.
 */
export function headerCount(request: FastifyRequest, name: string): number {
  const { rawHeaders } = request.raw;
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]?.toLowerCase() === name) count++;
  }
  return count;
}

/**
 * A query's names checked before its schema: one the route does not take is named as such, even where a
 * required one is missing (`?merchantRef=…` is a misspelling to point at, not only a missing
 * `merchantReference`), and one given twice is refused by name.
 */
function refuseQueryProblems(taken: ReadonlySet<string> | undefined) {
  return async (request: FastifyRequest): Promise<void> => {
    const query = request.query as Record<string, unknown>;
    const names = Object.keys(query);
    const unknown = taken && names.find((name) => !taken.has(name));
    if (unknown !== undefined)
      throw new ValidationError(`query parameter ${unknown} is not one this route takes`);
    const repeated = names.find((name) => Array.isArray(query[name]));
    if (repeated !== undefined) throw new ValidationError(`query parameter ${repeated} must be given once`);
  };
}

/** The charsets a JSON body is read in: JSON is UTF-8 (RFC 8259), whatever else a client names. */
const UTF8 = new Set(['utf-8', 'utf8']);

/** The `charset` parameter of a Content-Type header, unquoted; undefined when it names none. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2]) : undefined;
}

/**
 * What every request's input is held to before a route sees it: an HTTP/1.1 request names its Host, a
 * body is JSON (no text/plain: it gets
 * 415 like any other type), sent uncompressed, within MAX_BODY_DEPTH and free of NUL characters, and so
 * is the URL, whose query parameters, where a route reads them, are each given once (no route takes a
 * list there; repeated, one would be read as a list and refused as not being the number or word it
 * should be).
 */
export const inputPlugin = fp(async (app: FastifyInstance) => {
  // bodyProblem refuses the field names that could poison `Object.prototype`, naming the field: the
  // parser's own refusal would read as "not valid JSON".
  const parseJson = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    // A route that takes no body takes none from a client that sets the content type on every request.
    if (text === '' && request.routeOptions.schema?.body === undefined) return done(null, undefined);
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding !== '' && encoding.toLowerCase() !== 'identity') {
      const named = JSON.stringify(encoding.slice(0, 40));
      const message = `header Content-Encoding ${named} is not supported; send the body uncompressed`;
      return done(new DomainError('UNSUPPORTED_MEDIA_TYPE', message), undefined);
    }
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && !UTF8.has(charset.toLowerCase())) {
      const message = `header Content-Type charset ${JSON.stringify(charset.slice(0, 40))} is not supported; send UTF-8`;
      return done(new DomainError('UNSUPPORTED_MEDIA_TYPE', message), undefined);
    }
    parseJson(request, text as string, (error: Error | null, body?: unknown) => {
      if (error) return done(error, undefined);
      const problem = bodyProblem(body);
      if (problem) return done(new ValidationError(problem), undefined);
      done(null, body);
    });
  });
  app.addHook('onRequest', async (request) => {
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      throw new ValidationError('header Host is required in HTTP/1.1 (RFC 9112, section 3.2)');
    }
    if (request.url.includes('%00')) throw new ValidationError('the URL must not contain %00 (U+0000)');
  });
  // Only on routes that read a query: pages and scripts ignore theirs, and the hot routes pay nothing.
  app.addHook('onRoute', (route) => {
    const schema = route.schema?.querystring as
      | { properties?: Record<string, unknown>; additionalProperties?: unknown }
      | undefined;
    if (schema === undefined) return;
    const taken =
      schema.additionalProperties === false ? new Set(Object.keys(schema.properties ?? {})) : undefined;
    const hooks = route.preValidation;
    route.preValidation = [...(hooks === undefined ? [] : [hooks].flat()), refuseQueryProblems(taken)];
  });
});
