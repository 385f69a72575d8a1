import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Checkout } from '../../checkout/index.js';
import { errorResponses } from '../schemas.js';
import {
  AddressId,
  AddressInfo,
  CHECKOUT_TAG,
  Empty,
  OrderParams,
  SHOPPER_SECURITY,
  ShippingMethod,
  shopperTokenOf,
} from './shopper-api.js';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const ShippingChoice = {
  shippingAddressId: Type.Optional(AddressId('An `addressId` of the wallet.')),
  shippingMethodId: Type.Optional(
    Type.String({ maxLength: 64, description: "A shipping method's `externalId`." }),
  ),
};

const PaymentMethodInfo = Type.Object({
  address: AddressInfo,
  addressId: Type.Integer(),
  cardBrand: Type.String(),
  expMonth: Type.Integer(),
  expYear: Type.Integer(),
  externalId: Type.String(),
  fullNameCard: Type.String(),
  isDefault: Type.Boolean(),
  last4CardNumber: Type.String(),
  needsCvv: Type.Boolean(),
  nickName: nullable(Type.String()),
  paymentToken: Type.String({ description: 'Opaque reference; never card data.' }),
  storedCredentialsIdentifier: nullable(Type.String()),
});

const TransactionDetails = Type.Object(
  {
    networkTransactionId: nullable(Type.String()),
    gatewayTransactionId: Type.String(),
    gatewayResponse: Type.Unknown({ description: 'An object (JSON gateways) or the text (XML gateways).' }),
    stpReferenceNum: Type.Optional(Type.String({ description: 'Connected variant only.' })),
  },
  { description: 'Interface section 2.11.' },
);

export const PayAnswer = Type.Union([
  Type.Object({
    outcome: Type.Literal('success'),
    orderId: Type.String(),
    customerInfo: Type.Object({
      email: Type.String(),
      paymentMethod: PaymentMethodInfo,
      phoneNumber: nullable(Type.String()),
    }),
    shippingInfo: Type.Union([AddressInfo, Empty]),
    billingInfo: AddressInfo,
    shippingMethod: Type.Union([ShippingMethod, Empty]),
    taxes: Type.Integer({ description: 'Integer cents.' }),
    transactionDetails: TransactionDetails,
  }),
  Type.Object({
    outcome: Type.Literal('error'),
    orderId: Type.String(),
    errorCode: Type.String({ description: '`990`, `995` or `-1`.' }),
    errorMessage: nullable(Type.String()),
  }),
  Type.Object(
    {
      outcome: Type.Literal('pending'),
      orderId: Type.String(),
    },
    {
      description:
        'The gateway gave no decision in time, and the payment may have gone through: the order stays PROCESSING. Submit the same body again (every few seconds) until the answer is `success` or `error`; nothing is charged twice.',
    },
  ),
  Type.Object({
    outcome: Type.Literal('payment-selected'),
    selection: Type.Object(
      {
        orderId: Type.String(),
        sessionId: Type.String(),
        paymentId: Type.String(),
        billingInfo: AddressInfo,
        shippingInfo: Type.Union([AddressInfo, Empty]),
        shippingMethod: Type.Union([ShippingMethod, Empty]),
        taxes: Type.Integer(),
      },
      { description: "Merchant mode: what the SDK passes to the merchant page's `onPaymentSelected`." },
    ),
  }),
]);

/** Pay (or, in the merchant's authorization mode, hand over the selection). See docs/internals/checkout-protocol.md. */
export const payRoute =
  (deps: { checkout: Checkout }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/checkout/api/orders/:orderId/pay',
      {
        schema: {
          tags: CHECKOUT_TAG,
          operationId: 'payOrder',
          summary: 'Pay the order with a saved card',
          description:
            'A decided payment is 200 with `outcome` `success` or `error`; a repeated submit answers the same outcome and never charges twice. When the gateway gave no decision in time the answer is `pending`: the payment is under way, and the same submit again settles it once no earlier ask can still be running (three times the gateway time-out plus the larger of the time-out and 5 s after the last began): the decision the gateway made, looked up by the order id, or an authorization now if it made none. Until then, while another submit asks, and while the gateway cannot be reached, it answers `pending` at once; a submit naming another card is 409. When the merchant authorizes payments itself (`merchant` mode) nothing is charged: the answer is `payment-selected` with a new payment-carousel `sessionId` for `POST /payments/credentials`, the order becomes PROCESSING (it no longer expires and cannot be closed), and a repeated submit answers the same selection.',
          security: SHOPPER_SECURITY,
          params: OrderParams,
          body: Type.Object({
            paymentId: Type.String({
              minLength: 1,
              maxLength: 64,
              description: 'A `paymentId` of the wallet.',
            }),
            ...ShippingChoice,
            cvv: Type.Optional(
              Type.String({ pattern: '^[0-9]{3,4}$', description: 'Sent to the gateway, never stored.' }),
            ),
            total: Type.Optional(
              Type.Integer({
                minimum: 0,
                description:
                  "The total shown to the shopper (the quote's `total`, integer cents). When the order would now cost another amount, the payment is refused with 409 `TOTAL_CHANGED` and nothing is charged.",
              }),
            ),
          }),
          response: {
            200: PayAnswer,
            ...errorResponses([
              'VALIDATION_ERROR',
              'SHOPPER_UNAUTHORIZED',
              'ORDER_NOT_FOUND',
              'PAYMENT_METHOD_NOT_FOUND',
              'ADDRESS_NOT_FOUND',
              'ORDER_STATE_CONFLICT',
              'TOTAL_CHANGED',
              'PAYMENT_METHOD_EXPIRED',
            ]),
          },
        },
      },
      async (request) => {
        const { orderId } = request.params;
        const shopperId = await deps.checkout.authenticate(shopperTokenOf(request), orderId);
        return deps.checkout.pay(shopperId, orderId, request.body);
      },
    );
  };
