/**
 * The connector interface every payment gateway implements. A connector gets a built authorization
 * request and the merchant's credentials, talks to its gateway, and returns what the gateway decided;
 * it holds no state and never touches the database.
 */
import type { Secret } from '../secret.js';
import { GatewayError } from './errors.js';

export interface CardSource {
  type: 'card';
  pan: Secret<string>;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  /** Entered by the shopper for this payment only; never stored. */
  cvv?: Secret<string>;
}

export interface NetworkTokenSource {
  type: 'network_token';
  token: Secret<string>;
  /** The token service's one-time cryptogram (base64, 28 characters). */
  cryptogram: Secret<string>;
  expMonth: number;
  /** Four digits. */
  expYear: number;
}

/** Field names as in the interface's SDK addresses (section 2.8), so a wallet address passes as is. */
export interface GatewayAddress {
  firstName: string;
  lastName: string;
  address1: string;
  address2: string | null;
  city: string;
  state: string;
  zip: string;
  /** ISO 3166-1 alpha-2, such as `US`. */
  country: string;
  phoneNumber: string | null;
}

/**
 * Card-on-file flags, which card networks agree per merchant. A merchant's first payment with a saved
 * card is `initial`; its later ones are `subsequent` and name the first one's network transaction id
 * (the card's `storedCredentialsIdentifier` at that merchant).
 */
export interface StoredCredential {
  kind: 'initial' | 'subsequent';
  initiator: 'cardholder' | 'merchant';
  previousNetworkTransactionId?: string;
}

export interface AuthorizationRequest {
  /** Integer, in the currency's minor unit (cents for USD). */
  amount: number;
  /** ISO 4217, such as `USD`. */
  currency: string;
  /** Our order reference, echoed by the gateway so its records can be matched to ours. */
  orderReference: string;
  source: CardSource | NetworkTokenSource;
  billingAddress: GatewayAddress;
  storedCredential: StoredCredential;
  /** The merchant's checkout variant; `connected` asks the gateway for an `stpReferenceNum`. */
  variant: 'standard' | 'connected';
  /** Sent to the gateway so that a retried request is answered, not charged, again. */
  idempotencyKey: string;
}

/**
 * approved: the issuer approved. declined: the card was processed and declined by its issuer.
 * invalid_card: the card or its credentials could not be used (bad number, expired, refused
 * cryptogram). error: the gateway answered that it failed to process the request.
 */
export type GatewayOutcome = 'approved' | 'declined' | 'invalid_card' | 'error';

export interface GatewayResult {
  outcome: GatewayOutcome;
  /** For later operations (capture, void, refund) on this authorization; copied from `rawResponse`. */
  gatewayTransactionId: string;
  /** From the card network, copied from `rawResponse`; null when the network returned none. */
  networkTransactionId: string | null;
  /** Connected variant only, copied from `rawResponse`. */
  stpReferenceNum?: string;
  /** The gateway's answer untouched: a parsed object for JSON gateways, the text for XML ones. */
  rawResponse: unknown;
  /** The gateway's own words for the outcome, for logs and operators; never shown to shoppers. */
  message: string;
}

/** What a connector can do beyond authorizing a card; asking for anything else throws. */
export interface GatewayCapabilities {
  networkTokens: boolean;
  /** Returns an `stpReferenceNum` for merchants in the connected variant. */
  connectedVariant: boolean;
  /**
   * The gateway answers a repeated `idempotencyKey` with its first answer and decides nothing twice,
   * so the registry may retry after a time-out (`retry.ts`).
   */
  idempotentReplay: boolean;
}

/**
 * The merchant's secrets for its gateway account, decrypted by the caller for one call. Each
 * connector documents the names it reads.
 */
export type GatewayCredentials = Readonly<Record<string, Secret<string>>>;

export interface GatewayConnector {
  /** The gateway's name in merchants' gateway settings, such as `sandbox`. */
  readonly name: string;
  readonly supports: GatewayCapabilities;
  /**
   * Resolves with the gateway's decision; rejects with a GatewayError when there is none to read
   * (time-out, network failure, refused request, unreadable answer) or the request asks for something
   * the connector does not support.
   */
  authorize(request: AuthorizationRequest, credentials: GatewayCredentials): Promise<GatewayResult>;
  /**
   * The decision the gateway made for the authorization sent with `idempotencyKey`, or undefined when
   * it made none (so nothing was charged); rejects with a GatewayError when it cannot tell. How a payment
   * whose answer was lost is settled without sending the authorization again, which could not be the
   * same request: its CVV is not kept. Connectors whose gateway cannot look an authorization up leave it
   * out.
   */
  lookup?(idempotencyKey: string, credentials: GatewayCredentials): Promise<GatewayResult | undefined>;
}

/** Throws when `request` needs a capability the connector has not declared. */
export function assertSupported(connector: GatewayConnector, request: AuthorizationRequest): void {
  if (request.source.type === 'network_token' && !connector.supports.networkTokens) {
    throw new GatewayError(
      'unsupported',
      `the ${connector.name} gateway connector does not take network tokens`,
    );
  }
  if (request.variant === 'connected' && !connector.supports.connectedVariant) {
    throw new GatewayError(
      'unsupported',
      `the ${connector.name} gateway connector does not support the connected checkout variant`,
    );
  }
}
