import type { CredentialType, Merchant } from '../merchants/types.js';
import type { TokenService } from '../vault/token-service.js';
import type { CardVault } from '../vault/vault.js';
import type { Address, Card, Shopper } from '../wallet/types.js';
import type { PaymentsRepo } from './repo.js';
import type { CredentialEntry, CredentialsRequest, PaymentCredentialsPayload } from './types.js';

export interface PayloadDeps {
  repo: PaymentsRepo;
  merchants: { get(id: string): Promise<Merchant | undefined> };
  wallet: {
    findCard(id: string): Promise<Card | undefined>;
    findAddress(id: number): Promise<Address | undefined>;
    getShopper(id: string): Promise<Shopper | undefined>;
  };
  vault: Pick<CardVault, 'reveal'>;
  tokens: TokenService;
}

/** What an acknowledgement already read for the first delivery of its request. Holds no card data. */
export interface RememberedRequest {
  request: CredentialsRequest;
  card: Card;
}

const twoDigits = (month: number) => String(month).padStart(2, '0');

/** Requests acknowledged by this process and not yet built, at most (about 10 MiB). */
const MAX_REMEMBERED = 20_000;

/**
 * Builds the `PAYMENT_CREDENTIALS` body at delivery time from the vault, so card data is never stored
 * in a payload. The same request always yields the same body: the network token is stable per card and
 * the cryptogram is derived from the request id under the key kept with the request.
 */
export class CredentialsPayloadBuilder {
  /** Request id → what the acknowledgement already read; taken by the first build. */
  readonly #remembered = new Map<string, RememberedRequest>();

  constructor(private readonly deps: PayloadDeps) {}

  /**
   * Keeps a committed request and its card for the first delivery attempt, which then need not read back
   * rows this process has just written. Neither holds card data: the number stays in the vault. A retry,
   * another process, or this one after a restart reads the same values from the database.
   */
  remember(request: CredentialsRequest, card: Card): void {
    // Full: start over, which also drops requests delivered elsewhere. Evicting one at a time would walk
    // the map's deleted slots on every call while deliveries lag behind.
    if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered.clear();
    this.#remembered.set(request.id, { request, card });
  }

  /**
   * Takes back what `remember` kept for a request, if it is still here: for a builder in another thread
   * (the delivery worker), which is given it to remember in turn.
   */
  take(credentialsRequestId: string): RememberedRequest | undefined {
    const remembered = this.#remembered.get(credentialsRequestId);
    if (remembered) this.#remembered.delete(credentialsRequestId);
    return remembered;
  }

  async build(credentialsRequestId: string): Promise<PaymentCredentialsPayload> {
    const remembered = this.take(credentialsRequestId);
    const request = remembered?.request ?? (await this.deps.repo.requestById(credentialsRequestId));
    if (!request) throw new Error(`credentials request ${credentialsRequestId} no longer exists`);
    const [merchant, card] = await Promise.all([
      this.deps.merchants.get(request.merchantId),
      remembered?.card ?? this.deps.wallet.findCard(request.paymentId),
    ]);
    if (!merchant) throw new Error(`merchant ${request.merchantId} no longer exists`);
    // Approval withdrawn since the acknowledgement: no card data goes out, and the attempt says why.
    if (merchant.credentialTypes.length === 0) {
      throw new Error(`merchant ${merchant.id} is no longer approved for the credentials flow`);
    }
    if (!card) throw new Error(`payment method ${request.paymentId} no longer exists`);
    const address = await this.deps.wallet.findAddress(card.billingAddressId);
    if (!address) throw new Error(`billing address of payment method ${card.id} no longer exists`);
    // The shopper is read only for a billing address without a phone number.
    const phoneNumber =
      address.phoneNumber ?? (await this.deps.wallet.getShopper(card.shopperId))?.phone ?? '';
    return {
      eventName: 'PAYMENT_CREDENTIALS',
      paymentId: card.id,
      merchantId: merchant.id,
      merchantReference: request.merchantReference,
      cardDetails: { networkType: card.brand.toLowerCase() },
      billingAddress: {
        firstName: address.firstName,
        lastName: address.lastName,
        address1: address.address1,
        city: address.city,
        state: address.state,
        country: address.country,
        zipCode: address.zip,
        phoneNumber,
      },
      credentials: await this.#credentials(merchant.credentialTypes, card, request),
    };
  }

  async #credentials(
    types: CredentialType[],
    card: Card,
    request: CredentialsRequest,
  ): Promise<CredentialEntry[]> {
    const entries: CredentialEntry[] = [];
    if (types.includes('NETWORK_TOKEN')) {
      const token = await this.deps.tokens.networkToken({ vaultId: card.vaultId, brand: card.brand });
      entries.push({
        type: 'NETWORK_TOKEN',
        token: token.token.reveal(),
        cvv: this.deps.tokens.cryptogram(token, request).reveal(),
        expirationMonth: twoDigits(token.expMonth),
        expirationYear: String(token.expYear),
      });
    }
    if (types.includes('PAN')) {
      const pan = await this.deps.vault.reveal(card.vaultId);
      entries.push({
        type: 'PAN',
        pan: pan.reveal(),
        expirationMonth: twoDigits(card.expMonth),
        expirationYear: String(card.expYear),
      });
    }
    return entries;
  }
}
