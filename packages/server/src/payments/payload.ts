import type { CredentialType, Merchant } from '../merchants/types.js';
import type { TokenService } from '../vault/token-service.js';
import type { CardVault } from '../vault/vault.js';
import type { Address, Card, Shopper } from '../wallet/types.js';
import type { PaymentsRepo } from './repo.js';
import type { CredentialEntry, PaymentCredentialsPayload } from './types.js';

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

const twoDigits = (month: number) => String(month).padStart(2, '0');

/**
 * Builds the `PAYMENT_CREDENTIALS` body at delivery time from the vault, so card data is never stored
 * in a payload. The same request always yields the same body: the network token is stable per card and
 * the cryptogram is derived from the request id.
 */
export class CredentialsPayloadBuilder {
  constructor(private readonly deps: PayloadDeps) {}

  async build(credentialsRequestId: string): Promise<PaymentCredentialsPayload> {
    const request = await this.deps.repo.requestById(credentialsRequestId);
    if (!request) throw new Error(`credentials request ${credentialsRequestId} no longer exists`);
    const [merchant, card] = await Promise.all([
      this.deps.merchants.get(request.merchantId),
      this.deps.wallet.findCard(request.paymentId),
    ]);
    if (!merchant) throw new Error(`merchant ${request.merchantId} no longer exists`);
    if (!card) throw new Error(`payment method ${request.paymentId} no longer exists`);
    const [address, shopper] = await Promise.all([
      this.deps.wallet.findAddress(card.billingAddressId),
      this.deps.wallet.getShopper(card.shopperId),
    ]);
    if (!address) throw new Error(`billing address of payment method ${card.id} no longer exists`);
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
        phoneNumber: address.phoneNumber ?? shopper?.phone ?? '',
      },
      credentials: await this.#credentials(merchant.credentialTypes, card, request.id),
    };
  }

  async #credentials(types: CredentialType[], card: Card, requestId: string): Promise<CredentialEntry[]> {
    const entries: CredentialEntry[] = [];
    if (types.includes('NETWORK_TOKEN')) {
      const token = await this.deps.tokens.networkToken({ vaultId: card.vaultId, brand: card.brand });
      entries.push({
        type: 'NETWORK_TOKEN',
        token: token.token.reveal(),
        cvv: this.deps.tokens.cryptogram(token, requestId).reveal(),
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
