/**
 * Reads an authorization request from either style through a `FieldReader`, so that the rules (what
 * is required, which values are allowed) are written once and errors name fields as each style spells
 * them.
 */
import {
  type AuthorizationRequest,
  type BillingAddress,
  type CardSource,
  type NetworkTokenSource,
  RequestError,
  type StoredCredential,
} from './model.js';

export interface FieldReader {
  /** The field's full name in the style's spelling, for error messages. */
  path(name: string): string;
  /** Absent (or empty) fields read as undefined; a value of the wrong type is a RequestError. */
  text(name: string): string | undefined;
  integer(name: string): number | undefined;
  flag(name: string): boolean | undefined;
  group(name: string): FieldReader | undefined;
  /** Which payment source the request carries, and its fields. */
  source(): { type: 'card' | 'network_token'; fields: FieldReader };
  /** Refuses fields no rule has read, as a misspelt optional field would otherwise be ignored. */
  finish(): void;
}

/** 99,999,999: the sandbox's ceiling on one authorization ($999,999.99 in cents). */
const MAX_AMOUNT = 99_999_999;
const MAX_REFERENCE_LENGTH = 64;
const MAX_TEXT_LENGTH = 128;

function required<T>(fields: FieldReader, name: string, value: T | undefined): T {
  if (value === undefined) throw new RequestError(fields.path(name), `${fields.path(name)} is required`);
  return value;
}

function requiredText(fields: FieldReader, name: string, maxLength = MAX_TEXT_LENGTH): string {
  const value = required(fields, name, fields.text(name));
  if (value.length > maxLength) {
    throw new RequestError(fields.path(name), `${fields.path(name)} must be at most ${maxLength} characters`);
  }
  return value;
}

function optionalText(fields: FieldReader, name: string): string | null {
  return fields.text(name) === undefined ? null : requiredText(fields, name);
}

function matching(fields: FieldReader, name: string, pattern: RegExp, rule: string): string {
  const value = required(fields, name, fields.text(name));
  if (!pattern.test(value)) throw new RequestError(fields.path(name), `${fields.path(name)} must be ${rule}`);
  return value;
}

function integerBetween(fields: FieldReader, name: string, min: number, max: number): number {
  const value = required(fields, name, fields.integer(name));
  if (value < min || value > max) {
    throw new RequestError(fields.path(name), `${fields.path(name)} must be between ${min} and ${max}`);
  }
  return value;
}

function oneOf<T extends string>(fields: FieldReader, name: string, allowed: readonly T[]): T {
  const value = required(fields, name, fields.text(name));
  if (!(allowed as readonly string[]).includes(value)) {
    throw new RequestError(fields.path(name), `${fields.path(name)} must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function readExpiry(fields: FieldReader): { expMonth: number; expYear: number } {
  return {
    expMonth: integerBetween(fields, 'expMonth', 1, 12),
    expYear: integerBetween(fields, 'expYear', 2000, 2099),
  };
}

function readSource(body: FieldReader): CardSource | NetworkTokenSource {
  const { type, fields } = body.source();
  let source: CardSource | NetworkTokenSource;
  if (type === 'card') {
    // Length and Luhn are the issuer's business: a wrong number is declined, not a malformed request.
    const number = matching(fields, 'number', /^\d{1,19}$/, 'up to 19 digits');
    const cvv =
      fields.text('cvv') === undefined ? null : matching(fields, 'cvv', /^\d{3,4}$/, '3 or 4 digits');
    source = { type, number, ...readExpiry(fields), cvv };
  } else {
    const token = matching(fields, 'token', /^\d{1,19}$/, 'up to 19 digits');
    // The form of a cryptogram is checked when deciding: a bad one is refused like a bad card.
    const cryptogram = requiredText(fields, 'cryptogram');
    source = { type, token, cryptogram, ...readExpiry(fields) };
  }
  fields.finish();
  return source;
}

function readBillingAddress(body: FieldReader): BillingAddress {
  const fields = required(body, 'billingAddress', body.group('billingAddress'));
  const address: BillingAddress = {
    firstName: requiredText(fields, 'firstName'),
    lastName: requiredText(fields, 'lastName'),
    line1: requiredText(fields, 'line1'),
    line2: optionalText(fields, 'line2'),
    city: requiredText(fields, 'city'),
    state: optionalText(fields, 'state'),
    postalCode: requiredText(fields, 'postalCode', 16),
    country: matching(fields, 'country', /^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 code such as US'),
    phone: optionalText(fields, 'phone'),
  };
  fields.finish();
  return address;
}

function readStoredCredential(body: FieldReader): StoredCredential | null {
  const fields = body.group('storedCredential');
  if (!fields) return null;
  const type = oneOf(fields, 'type', ['initial', 'subsequent'] as const);
  const initiator = oneOf(fields, 'initiator', ['cardholder', 'merchant'] as const);
  const previous =
    fields.text('previousNetworkTransactionId') === undefined
      ? null
      : matching(fields, 'previousNetworkTransactionId', /^[A-Za-z0-9]{1,32}$/, 'up to 32 letters or digits');
  const path = fields.path('previousNetworkTransactionId');
  if (type === 'initial' && previous !== null) {
    throw new RequestError(path, `${path} is only for subsequent transactions`);
  }
  // A merchant-initiated charge must name the cardholder's first one, which the network agreed to.
  if (type === 'subsequent' && initiator === 'merchant' && previous === null) {
    throw new RequestError(path, `${path} is required for merchant-initiated subsequent transactions`);
  }
  fields.finish();
  return { type, initiator, previousNetworkTransactionId: previous };
}

export function readAuthorizationRequest(body: FieldReader): AuthorizationRequest {
  const request: AuthorizationRequest = {
    amount: integerBetween(body, 'amount', 1, MAX_AMOUNT),
    currency: matching(body, 'currency', /^[A-Z]{3}$/, 'an ISO 4217 code such as USD'),
    reference: requiredText(body, 'reference', MAX_REFERENCE_LENGTH),
    source: readSource(body),
    billingAddress: readBillingAddress(body),
    storedCredential: readStoredCredential(body),
    connected: body.flag('connected') ?? false,
  };
  body.finish();
  return request;
}
