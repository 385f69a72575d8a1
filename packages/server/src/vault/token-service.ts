import type { Secret } from '../secret.js';

/** A network token stands in for a card number on the card network; it has its own expiry. */
export interface NetworkToken {
  token: Secret<string>;
  expMonth: number;
  /** Four digits. */
  expYear: number;
}

/**
 * What checkout needs from a token service (a card network's, or the sandbox one). A real token service
 * replaces the sandbox by implementing this interface.
 */
export interface TokenService {
  /** Provisions a token for the card on first use; later calls return the same token. */
  networkToken(card: { vaultId: string; brand: string }): Promise<NetworkToken>;
  /**
   * Names what a new credentials request's cryptogram will be derived under; kept with the request, so
   * that its value survives a rotation of the service's keys. A service that issues cryptograms some
   * other way may return any fixed string.
   */
  cryptogramKeyId(): string;
  /**
   * The cryptogram for one credentials request (sent in the webhook's `cvv` field). The same request
   * gives the same value, so a retried webhook carries what the first attempt carried. A `keyId` of null
   * (a request from before ids were kept) means the current key.
   */
  cryptogram(token: NetworkToken, request: { id: string; cryptogramKeyId: string | null }): Secret<string>;
}
