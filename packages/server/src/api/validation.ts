import { Ajv, type ErrorObject } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// A CommonJS module that is the plugin and also carries it as `default`, the one its types describe.
const addFormats = ajvFormats.default;

/**
 * Bodies are validated strictly: no type coercion (`"100"` is not an integer) and no silent removal of
 * fields. Query strings, path parameters and headers arrive as text, so they may be coerced.
 */
const strict = new Ajv({
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strict: false,
});
const lenient = new Ajv({
  coerceTypes: true,
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strict: false,
});
for (const ajv of [strict, lenient]) {
  ajv.addKeyword({ keyword: 'x-examples' });
  // Without it Ajv skips every `format` (strict: false), and `since: "yesterday"` would pass as a date-time.
  addFormats(ajv);
}

export const validatorCompiler: FastifySchemaCompiler<Record<string, unknown>> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : lenient).compile(schema);

function fieldName(error: ErrorObject, part: string | undefined): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`))
    .join('')
    .replace(/^\./, '');
  const missing =
    error.keyword === 'required' ? (error.params as { missingProperty: string }).missingProperty : '';
  const field = [path, missing].filter(Boolean).join('.');
  if (field) return field;
  return part === 'body' ? 'body' : (part ?? 'request');
}

function rule(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'type':
      return `must be ${/^[aeiou]/.test(String(params.type)) ? 'an' : 'a'} ${params.type}`;
    case 'minimum':
      return `must be at least ${params.limit}`;
    case 'exclusiveMinimum':
      return `must be greater than ${params.limit}`;
    case 'maximum':
      return `must be at most ${params.limit}`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters long`;
    case 'maxLength':
      return `must be at most ${params.limit} characters long`;
    case 'pattern':
      return `must match ${params.pattern}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(params.allowedValue)}`;
    case 'format':
      return params.format === 'date-time'
        ? 'must be a date-time with its time zone, such as 2026-11-29T00:00:00Z (RFC 3339)'
        : `must be a valid ${params.format}`;
    case 'additionalProperties':
      return `has an unknown field "${params.additionalProperty}"`;
    case 'minProperties':
      return params.limit === 1 ? 'must name a field' : `must name at least ${params.limit} fields`;
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * A union of literals (`status: CREATED | …`) fails each literal, then `anyOf`: the values allowed, all
 * of them, rather than the first one alone.
 */
function literalChoice(errors: ErrorObject[], first: ErrorObject): string | undefined {
  const at = (keyword: string) =>
    errors.filter((error) => error.keyword === keyword && error.instancePath === first.instancePath);
  const literals = at('const');
  if (first.keyword !== 'const' || literals.length < 2 || at('anyOf').length === 0) return undefined;
  return `must be one of ${literals.map((error) => String(error.params.allowedValue)).join(', ')}`;
}

/** One sentence naming the field and the rule it breaks, e.g. `amount must be an integer`. */
export function describeValidationError(errors: ErrorObject[], part: string | undefined): string {
  const [first] = errors;
  if (!first) return 'The request is invalid.';
  const where = part === 'headers' ? 'header ' : part === 'querystring' ? 'query parameter ' : '';
  if (first.keyword === 'additionalProperties' && first.instancePath === '' && where !== '') {
    const { additionalProperty } = first.params as { additionalProperty: string };
    return `${where}${additionalProperty} is not one this route takes`;
  }
  const field = fieldName(first, part);
  // Node gives header names in lower case; messages name them as the docs write them (`Idempotency-Key`).
  const named =
    part === 'headers'
      ? field.replace(/(^|-)([a-z])/g, (_, dash, letter) => dash + letter.toUpperCase())
      : field;
  return `${where}${named} ${literalChoice(errors, first) ?? rule(first)}`;
}
