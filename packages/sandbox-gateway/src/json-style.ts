/** The JSON style: `POST /v1/authorizations`, camelCase fields, a REST gateway's answer. */
import { type Authorization, type ErrorAnswer, RequestError, type ResponseStyle } from './model.js';
import { type FieldReader, readAuthorizationRequest } from './read.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class JsonFields implements FieldReader {
  readonly #read = new Set<string>();

  constructor(
    private readonly object: Record<string, unknown>,
    private readonly prefix: string,
  ) {}

  path(name: string): string {
    return `${this.prefix}${name}`;
  }

  #value(name: string, type: string, accepts: (value: unknown) => boolean): unknown {
    this.#read.add(name);
    const value = this.object[name];
    if (value === undefined || value === null) return undefined;
    if (!accepts(value)) throw new RequestError(this.path(name), `${this.path(name)} must be ${type}`);
    return value;
  }

  text(name: string): string | undefined {
    return this.#value(name, 'a string', (value) => typeof value === 'string') as string | undefined;
  }

  integer(name: string): number | undefined {
    return this.#value(name, 'an integer', Number.isInteger) as number | undefined;
  }

  flag(name: string): boolean | undefined {
    return this.#value(name, 'a boolean', (value) => typeof value === 'boolean') as boolean | undefined;
  }

  group(name: string): FieldReader | undefined {
    const value = this.#value(name, 'an object', isObject) as Record<string, unknown> | undefined;
    return value && new JsonFields(value, `${this.path(name)}.`);
  }

  source(): { type: 'card' | 'network_token'; fields: FieldReader } {
    const fields = this.group('source');
    if (!fields) throw new RequestError('source', 'source is required');
    const type = fields.text('type');
    if (type !== 'card' && type !== 'network_token') {
      throw new RequestError('source.type', 'source.type must be one of card, network_token');
    }
    return { type, fields };
  }

  finish(): void {
    const unknown = Object.keys(this.object).find((name) => !this.#read.has(name));
    if (unknown !== undefined) {
      throw new RequestError(this.path(unknown), `${this.path(unknown)} is not a known parameter`);
    }
  }
}

export const jsonStyle: ResponseStyle = {
  contentType: 'application/json; charset=utf-8',

  readRequest(body: unknown) {
    if (!isObject(body)) throw new RequestError('body', 'the body must be a JSON object');
    return readAuthorizationRequest(new JsonFields(body, ''));
  },

  renderAuthorization(authorization: Authorization) {
    return JSON.stringify({
      id: authorization.id,
      object: 'authorization',
      status: authorization.status,
      amount: authorization.amount,
      currency: authorization.currency,
      reference: authorization.reference,
      response: {
        code: authorization.responseCode,
        message: authorization.responseMessage,
        authCode: authorization.authCode,
        avsResult: authorization.avsResult,
        cvvResult: authorization.cvvResult,
      },
      paymentMethod: authorization.paymentMethod,
      network: {
        name: authorization.paymentMethod.brand,
        transactionId: authorization.networkTransactionId,
      },
      storedCredential: authorization.storedCredential,
      ...(authorization.stpReferenceNum === null ? {} : { stpReferenceNum: authorization.stpReferenceNum }),
      livemode: false,
      createdAt: authorization.createdAt,
    });
  },

  renderError(error: ErrorAnswer) {
    return JSON.stringify({ error });
  },
};
