/**
 * The gateway's own vocabulary, shared by both response styles: what an authorization request says once
 * read from JSON or XML, and the authorization record each style renders.
 */

export interface CardSource {
  type: 'card';
  number: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  cvv: string | null;
}

export interface NetworkTokenSource {
  type: 'network_token';
  token: string;
  /** Base64 of the token's one-time authentication value (a TAVV: 20 bytes, 28 characters). */
  cryptogram: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
}

export interface BillingAddress {
  firstName: string;
  lastName: string;
  line1: string;
  line2: string | null;
  city: string;
  state: string | null;
  postalCode: string;
  country: string;
  phone: string | null;
}

/** Card-on-file flags: the first use of a stored card, or a later one that names the first. */
export interface StoredCredential {
  type: 'initial' | 'subsequent';
  initiator: 'cardholder' | 'merchant';
  previousNetworkTransactionId: string | null;
}

export interface AuthorizationRequest {
  /** Integer, in the currency's minor unit (cents for USD). */
  amount: number;
  currency: string;
  /** The merchant's reference for the order, echoed in the response. */
  reference: string;
  source: CardSource | NetworkTokenSource;
  billingAddress: BillingAddress;
  storedCredential: StoredCredential | null;
  /** The merchant uses the connected checkout variant: responses carry `stpReferenceNum`. */
  connected: boolean;
}

/**
 * AUTHORIZED: approved. DECLINED: the issuer said no. REJECTED: the card or its credentials are not
 * usable (bad number, expired, refused cryptogram). FAILED: a processing error; nothing was decided.
 */
export type AuthorizationStatus = 'AUTHORIZED' | 'DECLINED' | 'REJECTED' | 'FAILED';

export interface Authorization {
  /** The gateway transaction id, `gtx_` and 24 hex digits. */
  id: string;
  status: AuthorizationStatus;
  /** ISO 8583 response code: `00` approved, `05` do not honour, `14` invalid card, … */
  responseCode: string;
  responseMessage: string;
  /** Six characters, for approvals only. */
  authCode: string | null;
  /** Address and CVV verification results; null when the request never reached the network. */
  avsResult: string | null;
  cvvResult: string | null;
  amount: number;
  currency: string;
  reference: string;
  paymentMethod: {
    type: CardSource['type'] | NetworkTokenSource['type'];
    brand: string;
    last4: string;
    expMonth: number;
    expYear: number;
  };
  /** 15 digits from the card network; null when the request never reached it. */
  networkTransactionId: string | null;
  storedCredential: StoredCredential | null;
  /** Connected merchants only: the gateway's reference for follow-up messages. */
  stpReferenceNum: string | null;
  createdAt: string;
}

/** Why a request could not be read; `param` names the field in the style's own spelling. */
export class RequestError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = 'RequestError';
  }
}

/** An answer that is not an authorization: the request was refused before anything was decided. */
export interface ErrorAnswer {
  type: 'invalid_request_error' | 'authentication_error' | 'idempotency_error' | 'api_error';
  code: string;
  message: string;
  /** The field at fault, in the style's spelling, when there is one. */
  param: string | null;
}

/** One way of speaking the authorization API: how requests are read and answers written. */
export interface ResponseStyle {
  readonly contentType: string;
  /** Throws RequestError when the body is not a valid request in this style. */
  readRequest(body: unknown): AuthorizationRequest;
  renderAuthorization(authorization: Authorization): string;
  renderError(error: ErrorAnswer): string;
}
