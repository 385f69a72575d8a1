/**
 * The XML style: `POST /xml/authorizations`, PascalCase elements, the answer of an older XML gateway.
 * Request and answer are documents; absent and empty elements mean the same.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { type Authorization, type ErrorAnswer, RequestError, type ResponseStyle } from './model.js';
import { type FieldReader, readAuthorizationRequest } from './read.js';

type Element = Record<string, unknown>;

// Values stay text: a card number read as a number would lose its last digits.
const parser = new XMLParser({ parseTagValue: false, ignoreAttributes: true, ignoreDeclaration: true });
const builder = new XMLBuilder({ format: true, indentBy: '  ', ignoreAttributes: false });

function isElement(value: unknown): value is Element {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pascal(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

class XmlFields implements FieldReader {
  readonly #read = new Set<string>();

  constructor(
    private readonly element: Element,
    private readonly prefix: string,
  ) {}

  path(name: string): string {
    return `${this.prefix}${pascal(name)}`;
  }

  /** The element's content: text, a nested element, or undefined when absent or empty. */
  #content(name: string): unknown {
    const tag = pascal(name);
    this.#read.add(tag);
    const value = this.element[tag];
    if (Array.isArray(value)) throw new RequestError(this.path(name), `${this.path(name)} must appear once`);
    return value === '' ? undefined : value;
  }

  text(name: string): string | undefined {
    const value = this.#content(name);
    if (value !== undefined && typeof value !== 'string') {
      throw new RequestError(this.path(name), `${this.path(name)} must be text`);
    }
    return value;
  }

  integer(name: string): number | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (!/^-?\d{1,15}$/.test(value)) {
      throw new RequestError(this.path(name), `${this.path(name)} must be an integer`);
    }
    return Number(value);
  }

  flag(name: string): boolean | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') {
      throw new RequestError(this.path(name), `${this.path(name)} must be true or false`);
    }
    return value === 'true';
  }

  group(name: string): FieldReader | undefined {
    const value = this.#content(name);
    if (value === undefined) return undefined;
    if (!isElement(value)) throw new RequestError(this.path(name), `${this.path(name)} must hold elements`);
    return new XmlFields(value, `${this.path(name)}/`);
  }

  source(): { type: 'card' | 'network_token'; fields: FieldReader } {
    const card = this.group('card');
    const token = this.group('networkToken');
    if (card && token) throw new RequestError('Card', 'send either Card or NetworkToken, not both');
    if (card) return { type: 'card', fields: card };
    if (token) return { type: 'network_token', fields: token };
    throw new RequestError('Card', 'Card or NetworkToken is required');
  }

  finish(): void {
    const unknown = Object.keys(this.element).find((tag) => !this.#read.has(tag));
    if (unknown !== undefined) {
      throw new RequestError(`${this.prefix}${unknown}`, `${this.prefix}${unknown} is not a known element`);
    }
  }
}

function document(root: string, content: Element): string {
  return builder.build({ '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' }, [root]: content });
}

export const xmlStyle: ResponseStyle = {
  contentType: 'application/xml; charset=utf-8',

  readRequest(body: unknown) {
    if (typeof body !== 'string') throw new RequestError('body', 'the body must be an XML document');
    // No document type declarations: their entities are the classic XML bomb, and requests need none.
    if (/<!DOCTYPE/i.test(body))
      throw new RequestError('body', 'document type declarations are not accepted');
    const valid = XMLValidator.validate(body);
    if (valid !== true) throw new RequestError('body', `the body is not well-formed XML: ${valid.err.msg}`);
    const parsed: unknown = parser.parse(body);
    const root = isElement(parsed) ? parsed.AuthorizationRequest : undefined;
    if (!isElement(root)) {
      throw new RequestError('AuthorizationRequest', 'the root element must be AuthorizationRequest');
    }
    return readAuthorizationRequest(new XmlFields(root, ''));
  },

  renderAuthorization(authorization: Authorization) {
    const { paymentMethod, storedCredential } = authorization;
    return document('AuthorizationResponse', {
      TransactionId: authorization.id,
      Status: authorization.status,
      ResponseCode: authorization.responseCode,
      ResponseMessage: authorization.responseMessage,
      AuthCode: authorization.authCode,
      AvsResult: authorization.avsResult,
      CvvResult: authorization.cvvResult,
      Amount: authorization.amount,
      Currency: authorization.currency,
      Reference: authorization.reference,
      PaymentMethod: {
        Type: paymentMethod.type,
        Brand: paymentMethod.brand,
        Last4: paymentMethod.last4,
        ExpMonth: paymentMethod.expMonth,
        ExpYear: paymentMethod.expYear,
      },
      NetworkTransactionId: authorization.networkTransactionId,
      ...(storedCredential === null
        ? {}
        : {
            StoredCredential: {
              Type: storedCredential.type,
              Initiator: storedCredential.initiator,
              PreviousNetworkTransactionId: storedCredential.previousNetworkTransactionId,
            },
          }),
      ...(authorization.stpReferenceNum === null ? {} : { StpReferenceNum: authorization.stpReferenceNum }),
      CreatedAt: authorization.createdAt,
    });
  },

  renderError(error: ErrorAnswer) {
    return document('ErrorResponse', {
      Type: error.type,
      Code: error.code,
      Message: error.message,
      Param: error.param,
    });
  },
};
