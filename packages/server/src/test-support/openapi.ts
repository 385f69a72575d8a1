import { Ajv } from 'ajv';
import type { TestService } from './service.js';

/**
 * Checks a webhook body against the schema `/openapi.json` documents for its event, as a merchant's
 * generated client would: the errors, or an empty list.
 */
export async function webhookSchemaErrors(
  service: TestService,
  eventName: string,
  body: unknown,
): Promise<string[]> {
  const document = await service.call('GET', '/openapi.json');
  const schema =
    document.json.webhooks?.[eventName]?.post?.requestBody?.content?.['application/json']?.schema;
  if (schema === undefined) return [`/openapi.json documents no ${eventName} webhook`];
  // `format` is documentation here; the values' shapes are checked by the tests themselves.
  const validate = new Ajv({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`);
}
