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
   * The cryptogram for one credentials request (sent in the webhook's `cvv` field). The same
   * `requestId` gives the same value, so a retried webhook carries what the first attempt carried.
   */
  cryptogram(token: NetworkToken, requestId: string): Secret<string>;
}
