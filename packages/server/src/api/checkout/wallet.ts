import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TProperties, Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import { errorResponses } from '../schemas.js';
import {
  AddressFields,
  AddressId,
  CardFields,
  CHECKOUT_TAG,
  SHOPPER_SECURITY,
  shopperTokenOf,
  WalletAddress,
} from './shopper-api.js';

const WalletCard = Type.Object({
  paymentId: Type.String({ description: 'Send back as `paymentId`.' }),
  cardBrand: Type.String({ description: 'Lower-case network name: `visa`, `mastercard`…' }),
  last4CardNumber: Type.String(),
  expMonth: Type.Integer(),
  expYear: Type.Integer(),
  fullNameCard: Type.String(),
  nickName: Type.Union([Type.String(), Type.Null()]),
  isDefault: Type.Boolean(),
  needsCvv: Type.Boolean(),
  expired: Type.Boolean({ description: 'Show disabled; paying with it is `PAYMENT_METHOD_EXPIRED`.' }),
  billingAddressId: Type.Integer(),
});

export const WalletView = Type.Object({
  email: Type.String(),
  phone: Type.Union([Type.String(), Type.Null()]),
  firstName: Type.String(),
  lastName: Type.String(),
  cards: Type.Array(WalletCard, { description: 'Default first, then newest.' }),
  addresses: Type.Array(WalletAddress, { description: 'Defaults first, then newest.' }),
});

export const NewAddressBody = Type.Object({
  ...AddressFields,
  phoneNumber: Type.Optional(Type.Union([Type.String({ maxLength: 30 }), Type.Null()])),
  isDefaultShipping: Type.Optional(Type.Boolean()),
  isDefaultBilling: Type.Optional(Type.Boolean()),
});

const TakeDefault = (what: string) =>
  Type.Literal(true, {
    description: `Make it the ${what}. Only \`true\`: a default is given up by making another one the default.`,
  });

/** Each field may be left out; one at least is sent, and none other. */
const changes = <T extends TProperties>(properties: T) =>
  Type.Partial(Type.Object(properties), { additionalProperties: false, minProperties: 1 });

export const AddressEditBody = changes({
  ...AddressFields,
  phoneNumber: Type.Union([Type.String({ maxLength: 30 }), Type.Null()]),
  isDefaultShipping: TakeDefault('default shipping address'),
  isDefaultBilling: TakeDefault('default billing address'),
});

export const CardEditBody = changes({
  nickName: Type.Union([Type.String({ maxLength: 40 }), Type.Null()], {
    description: 'Shown on the card instead of the name on it; null or empty takes it away.',
  }),
  nameOnCard: Type.String({ minLength: 1, maxLength: 100 }),
  billingAddressId: AddressId("The `addressId` of an address in the shopper's wallet."),
  isDefault: TakeDefault('default card'),
});

export const NewCardBody = Type.Object({
  ...CardFields,
  nameOnCard: Type.String({ minLength: 1, maxLength: 100 }),
  billingAddressId: AddressId("The `addressId` of an address in the shopper's wallet."),
  isDefault: Type.Optional(
    Type.Boolean({
      description:
        'Make it the default card. Without it, the card is the default only when the wallet has no default that can still pay.',
    }),
  ),
});

/** The signed-in shopper's wallet: reading it, adding, changing and removing addresses and cards, deleting it. */
export const walletRoutes =
  (deps: { checkout: Checkout }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/checkout/api/wallet',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'getWallet',
          summary: "The signed-in shopper's cards and addresses",
          security: SHOPPER_SECURITY,
          response: { 200: WalletView, ...errorResponses(['SHOPPER_UNAUTHORIZED']) },
        },
      },
      async (request) => deps.checkout.walletOf(await deps.checkout.authenticate(shopperTokenOf(request))),
    );

    app.post(
      '/checkout/api/wallet/addresses',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'addWalletAddress',
          summary: "Add an address to the signed-in shopper's wallet",
          description:
            "The shopper's first address becomes both defaults unless told otherwise. A wallet holds at most 20 addresses (`409 WALLET_FULL`). A sign-in from a remembered device is refused (`403 CODE_REQUIRED`): whoever holds the device could otherwise have the wallet's cards pay for goods sent to an address of theirs (a card's billing address is an address too); ask for a one-time code, sign in with it, and add the address again.",
          security: SHOPPER_SECURITY,
          body: NewAddressBody,
          response: {
            201: WalletAddress,
            ...errorResponses(['VALIDATION_ERROR', 'SHOPPER_UNAUTHORIZED', 'CODE_REQUIRED', 'WALLET_FULL']),
          },
        },
      },
      async (request, reply) => {
        const identity = await deps.checkout.identify(shopperTokenOf(request));
        return reply.status(201).send(await deps.checkout.addAddress(identity, request.body));
      },
    );

    app.post(
      '/checkout/api/wallet/cards',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'addWalletCard',
          summary: "Add a card to the signed-in shopper's wallet",
          description:
            'The number goes to the vault; the security code is not sent here: the checkout page sends the one typed with the card along with the payment that follows, and it is never asked again (`needsCvv` false). A number already in the wallet is not saved twice: that card is renewed (the later expiry wins, the name and billing address become these) and the answer is 200 instead of 201; a removed card typed again within the hour of its removal comes back (201), and after its number was erased is a new card (201).',
          security: SHOPPER_SECURITY,
          body: NewCardBody,
          response: {
            200: WalletCard,
            201: WalletCard,
            ...errorResponses(['VALIDATION_ERROR', 'SHOPPER_UNAUTHORIZED', 'WALLET_FULL']),
          },
        },
      },
      async (request, reply) => {
        const identity = await deps.checkout.identify(shopperTokenOf(request));
        const { card, created } = await deps.checkout.addCard(identity, request.body);
        return reply.status(created ? 201 : 200).send(card);
      },
    );

    app.patch(
      '/checkout/api/wallet/addresses/:addressId',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'updateWalletAddress',
          summary: "Change an address in the signed-in shopper's wallet",
          description:
            "Send the fields that change. Orders made with the address go on showing it as it was, so new values save a new address in its place: it has a new `addressId` and `externalId`, keeps the old one's defaults, and becomes the billing address of the cards the old one was; the old `addressId` then answers `404 ADDRESS_NOT_FOUND`. Values that change nothing, and a default the address already is, leave it as it is. New values from a sign-in by a remembered device are refused, as a new address is (`403 CODE_REQUIRED`); defaults alone are not. Answers the address as it is now and the wallet.",
          security: SHOPPER_SECURITY,
          params: Type.Object({ addressId: AddressId('The `addressId` of an address in the wallet.') }),
          body: AddressEditBody,
          response: {
            200: Type.Object({ address: WalletAddress, wallet: WalletView }),
            ...errorResponses([
              'VALIDATION_ERROR',
              'SHOPPER_UNAUTHORIZED',
              'CODE_REQUIRED',
              'ADDRESS_NOT_FOUND',
            ]),
          },
        },
      },
      async (request) => {
        const identity = await deps.checkout.identify(shopperTokenOf(request));
        return deps.checkout.editAddress(identity, request.params.addressId, request.body);
      },
    );

    app.patch(
      '/checkout/api/wallet/cards/:paymentId',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'updateWalletCard',
          summary: "Change a card in the signed-in shopper's wallet",
          description:
            'Send the fields that change: its nickname, the name on it, its billing address, or `isDefault: true`. The number and the expiry change only by adding the card again (`POST /checkout/api/wallet/cards`). An expired card cannot be the default (`422 PAYMENT_METHOD_EXPIRED`). A payment or webhook already under way uses the card as it was. Answers the card as it is now and the wallet.',
          security: SHOPPER_SECURITY,
          params: Type.Object({ paymentId: Type.String({ minLength: 1, maxLength: 64 }) }),
          body: CardEditBody,
          response: {
            200: Type.Object({ card: WalletCard, wallet: WalletView }),
            ...errorResponses([
              'VALIDATION_ERROR',
              'SHOPPER_UNAUTHORIZED',
              'PAYMENT_METHOD_NOT_FOUND',
              'PAYMENT_METHOD_EXPIRED',
            ]),
          },
        },
      },
      async (request) => {
        const identity = await deps.checkout.identify(shopperTokenOf(request));
        return deps.checkout.editCard(identity, request.params.paymentId, request.body);
      },
    );

    app.delete(
      '/checkout/api/wallet/cards/:paymentId',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'removeWalletCard',
          summary: "Remove a card from the signed-in shopper's wallet",
          description:
            'The card is no longer listed, and new payments and credentials requests answer `PAYMENT_METHOD_NOT_FOUND` for it; a payment or webhook already under way still goes through. Removing the default card makes the newest card that can still pay the default. Removing it again answers the same; adding its number again within the hour brings it back (`201`). An hour after the removal the number is erased from the vault, unless another wallet holds it or a webhook already acknowledged still needs it; added after that, it is a new card (`201`, a new `paymentId`). Answers the wallet as it is then.',
          security: SHOPPER_SECURITY,
          params: Type.Object({ paymentId: Type.String({ minLength: 1, maxLength: 64 }) }),
          response: {
            200: WalletView,
            ...errorResponses(['VALIDATION_ERROR', 'SHOPPER_UNAUTHORIZED', 'PAYMENT_METHOD_NOT_FOUND']),
          },
        },
      },
      async (request) => {
        const identity = await deps.checkout.identify(shopperTokenOf(request));
        return deps.checkout.removeCard(identity, request.params.paymentId);
      },
    );

    app.delete(
      '/checkout/api/wallet/addresses/:addressId',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'removeWalletAddress',
          summary: "Remove an address from the signed-in shopper's wallet",
          description:
            'The address is no longer listed, and new payments and cards answer `ADDRESS_NOT_FOUND` for it; cards and orders that name it still read it. The billing address of a card in the wallet is refused (`409 ADDRESS_IN_USE`): add that card again with another billing address, or remove it, first. A default passes to the newest address left. Removing it again answers the same. Answers the wallet as it is then.',
          security: SHOPPER_SECURITY,
          params: Type.Object({ addressId: AddressId('The `addressId` of an address in the wallet.') }),
          response: {
            200: WalletView,
            ...errorResponses([
              'VALIDATION_ERROR',
              'SHOPPER_UNAUTHORIZED',
              'ADDRESS_NOT_FOUND',
              'ADDRESS_IN_USE',
            ]),
          },
        },
      },
      async (request) => {
        const identity = await deps.checkout.identify(shopperTokenOf(request));
        return deps.checkout.removeAddress(identity, request.params.addressId);
      },
    );

    app.delete(
      '/checkout/api/wallet',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'deleteWallet',
          summary: "Delete the signed-in shopper's wallet",
          description:
            "The shopper's own erasure, as an operator's `wallet-checkout shopper erase` does it: every card leaves the wallet (its number is erased from the vault an hour later), the name, email, phone and every address are emptied, payment-carousel sessions end, and every sign-in ends, this one included (later calls answer `401 SHOPPER_UNAUTHORIZED`). The email is free for a new wallet. Orders stay with the merchants they were made for, and a credentials webhook already acknowledged is still delivered. Recorded in the service's audit trail as the shopper's own action. A sign-in from a remembered device is refused (`403 CODE_REQUIRED`): someone else may be using that device, and this cannot be undone; ask for a one-time code, sign in with it, and delete again.",
          security: SHOPPER_SECURITY,
          response: {
            200: Type.Object({ deleted: Type.Literal(true) }),
            ...errorResponses(['SHOPPER_UNAUTHORIZED', 'CODE_REQUIRED']),
          },
        },
      },
      async (request) => {
        const identity = await deps.checkout.identify(shopperTokenOf(request));
        await deps.checkout.deleteWallet(identity);
        return { deleted: true as const };
      },
    );
  };
