import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import { errorResponses } from '../schemas.js';
import {
  AddressFields,
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

/** The signed-in shopper's wallet, and new shipping addresses. */
export const walletRoutes =
  (deps: { checkout: Checkout }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/checkout/api/wallet',
      {
        schema: {
          tags: CHECKOUT_TAG,
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
          summary: "Add an address to the signed-in shopper's wallet",
          description: "The shopper's first address becomes both defaults unless told otherwise.",
          security: SHOPPER_SECURITY,
          body: NewAddressBody,
          response: {
            201: WalletAddress,
            ...errorResponses(['VALIDATION_ERROR', 'SHOPPER_UNAUTHORIZED']),
          },
        },
      },
      async (request, reply) => {
        const shopperId = await deps.checkout.authenticate(shopperTokenOf(request));
        return reply.status(201).send(await deps.checkout.addAddress(shopperId, request.body));
      },
    );
  };
