/**
 * Pure mapping between our authorization request and result and the sandbox gateway's two styles
 * (packages/sandbox-gateway/README.md). No I/O: index.ts sends what these build and hands back what
 * they read.
 */
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { GatewayError, gatewayText } from '../errors.js';
import type { AuthorizationRequest, GatewayOutcome, GatewayResult } from '../gateway.js';

/** The gateway's decision, in its own words. */
export const SANDBOX_STATUSES = ['AUTHORIZED', 'DECLINED', 'REJECTED', 'FAILED'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

/**
 * Only AUTHORIZED approves. REJECTED is the gateway's "card or credentials unusable" (interface code
 * 990), DECLINED the issuer's refusal (995), FAILED a processing error (-1).
 */
export function outcomeOf(status: SandboxStatus): GatewayOutcome {
  switch (status) {
    case 'AUTHORIZED':
      return 'approved';
    case 'DECLINED':
      return 'declined';
    case 'REJECTED':
      return 'invalid_card';
    case 'FAILED':
      return 'error';
    default: {
      const unknown: never = status;
      throw new GatewayError('unexpected_response', `unknown sandbox status ${String(unknown)}`);
    }
  }
}

function isSandboxStatus(value: unknown): value is SandboxStatus {
  return (SANDBOX_STATUSES as readonly unknown[]).includes(value);
}

/** The JSON style's request body. Secrets are revealed here, for the wire, and nowhere else. */
export interface SandboxJsonRequest {
  amount: number;
  currency: string;
  reference: string;
  source:
    | { type: 'card'; number: string; expMonth: number; expYear: number; cvv?: string }
    | { type: 'network_token'; token: string; cryptogram: string; expMonth: number; expYear: number };
  billingAddress: {
    firstName: string;
    lastName: string;
    line1: string;
    line2?: string;
    city: string;
    state?: string;
    postalCode: string;
    country: string;
    phone?: string;
  };
  storedCredential: {
    type: 'initial' | 'subsequent';
    initiator: 'cardholder' | 'merchant';
    previousNetworkTransactionId?: string;
  };
  connected: boolean;
}

/** Empty and null values are left out: the gateway reads them as absent anyway. */
function present(value: string | null | undefined): string | undefined {
  return value ? value : undefined;
}

export function toJsonRequest(request: AuthorizationRequest): SandboxJsonRequest {
  const { source, billingAddress: address, storedCredential } = request;
  return {
    amount: request.amount,
    currency: request.currency,
    reference: request.orderReference,
    source:
      source.type === 'card'
        ? {
            type: 'card',
            number: source.pan.reveal(),
            expMonth: source.expMonth,
            expYear: source.expYear,
            cvv: source.cvv?.reveal(),
          }
        : {
            type: 'network_token',
            token: source.token.reveal(),
            cryptogram: source.cryptogram.reveal(),
            expMonth: source.expMonth,
            expYear: source.expYear,
          },
    billingAddress: {
      firstName: address.firstName,
      lastName: address.lastName,
      line1: address.address1,
      line2: present(address.address2),
      city: address.city,
      state: present(address.state),
      postalCode: address.zip,
      country: address.country,
      phone: present(address.phoneNumber),
    },
    storedCredential: {
      type: storedCredential.kind,
      initiator: storedCredential.initiator,
      previousNetworkTransactionId: present(storedCredential.previousNetworkTransactionId),
    },
    connected: request.variant === 'connected',
  };
}

// Values stay text: a transaction id read as a number would lose digits.
const xmlParser = new XMLParser({ parseTagValue: false, ignoreAttributes: true, ignoreDeclaration: true });
const xmlBuilder = new XMLBuilder({ format: true, indentBy: '  ', ignoreAttributes: false });

/** The XML style's request document: the JSON request's fields as PascalCase elements. */
export function toXmlRequest(request: AuthorizationRequest): string {
  const body = toJsonRequest(request);
  const { source, billingAddress: address, storedCredential } = body;
  return xmlBuilder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    AuthorizationRequest: {
      Amount: body.amount,
      Currency: body.currency,
      Reference: body.reference,
      ...(source.type === 'card'
        ? {
            Card: {
              Number: source.number,
              ExpMonth: source.expMonth,
              ExpYear: source.expYear,
              Cvv: source.cvv,
            },
          }
        : {
            NetworkToken: {
              Token: source.token,
              Cryptogram: source.cryptogram,
              ExpMonth: source.expMonth,
              ExpYear: source.expYear,
            },
          }),
      BillingAddress: {
        FirstName: address.firstName,
        LastName: address.lastName,
        Line1: address.line1,
        Line2: address.line2,
        City: address.city,
        State: address.state,
        PostalCode: address.postalCode,
        Country: address.country,
        Phone: address.phone,
      },
      StoredCredential: {
        Type: storedCredential.type,
        Initiator: storedCredential.initiator,
        PreviousNetworkTransactionId: storedCredential.previousNetworkTransactionId,
      },
      Connected: body.connected,
    },
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unexpected(detail: string, statusCode: number): GatewayError {
  return new GatewayError('unexpected_response', `unreadable sandbox gateway answer: ${detail}`, {
    statusCode,
  });
}

/**
 * Authorizations are 201 whatever was decided; any other status carries an error answer. Its code and
 * message are the gateway's text, which may echo the request: they enter our errors through gatewayText.
 */
function refused(statusCode: number, code: unknown, message: unknown): GatewayError {
  const gatewayCode = typeof code === 'string' ? gatewayText(code) : undefined;
  const reason = gatewayCode === undefined ? 'no error code' : `${gatewayCode}: ${gatewayText(message)}`;
  return new GatewayError(
    'rejected_request',
    `sandbox gateway refused the request (${statusCode}, ${reason})`,
    { statusCode, ...(gatewayCode === undefined ? {} : { gatewayCode }) },
  );
}

function result(
  status: unknown,
  fields: {
    id: unknown;
    message: unknown;
    networkTransactionId: unknown;
    stpReferenceNum: unknown;
    rawResponse: unknown;
  },
  statusCode: number,
): GatewayResult {
  if (!isSandboxStatus(status)) throw unexpected(`status ${gatewayText(JSON.stringify(status))}`, statusCode);
  const { id, message, networkTransactionId, stpReferenceNum } = fields;
  if (typeof id !== 'string' || id === '') throw unexpected('no transaction id', statusCode);
  if (typeof message !== 'string') throw unexpected('no response message', statusCode);
  if (networkTransactionId !== null && typeof networkTransactionId !== 'string') {
    throw unexpected('network transaction id is not text', statusCode);
  }
  if (stpReferenceNum !== undefined && typeof stpReferenceNum !== 'string') {
    throw unexpected('stpReferenceNum is not text', statusCode);
  }
  return {
    outcome: outcomeOf(status),
    gatewayTransactionId: id,
    networkTransactionId,
    ...(stpReferenceNum === undefined ? {} : { stpReferenceNum }),
    rawResponse: fields.rawResponse,
    message: gatewayText(message),
  };
}

/** Reads a JSON-style answer; `rawResponse` is the parsed body, as the merchant will receive it. */
export function fromJsonResponse(statusCode: number, text: string): GatewayResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw unexpected('not JSON', statusCode);
  }
  if (!isObject(body)) throw unexpected('not a JSON object', statusCode);
  if (statusCode !== 201) {
    const error = isObject(body.error) ? body.error : {};
    throw refused(statusCode, error.code, error.message);
  }
  const response = isObject(body.response) ? body.response : {};
  const network = isObject(body.network) ? body.network : {};
  return result(
    body.status,
    {
      id: body.id,
      message: response.message,
      networkTransactionId: network.transactionId,
      stpReferenceNum: body.stpReferenceNum,
      rawResponse: body,
    },
    statusCode,
  );
}

/** Reads an XML-style answer; `rawResponse` is the document text, untouched. */
export function fromXmlResponse(statusCode: number, text: string): GatewayResult {
  if (XMLValidator.validate(text) !== true) throw unexpected('not well-formed XML', statusCode);
  const document: unknown = xmlParser.parse(text);
  if (!isObject(document)) throw unexpected('not an XML document', statusCode);
  if (statusCode !== 201) {
    const error = isObject(document.ErrorResponse) ? document.ErrorResponse : {};
    throw refused(statusCode, error.Code, error.Message);
  }
  const answer = document.AuthorizationResponse;
  if (!isObject(answer)) throw unexpected('no AuthorizationResponse element', statusCode);
  return result(
    answer.Status,
    {
      id: answer.TransactionId,
      message: answer.ResponseMessage,
      // An empty element is the style's null.
      networkTransactionId: answer.NetworkTransactionId === '' ? null : answer.NetworkTransactionId,
      stpReferenceNum: answer.StpReferenceNum,
      rawResponse: text,
    },
    statusCode,
  );
}
