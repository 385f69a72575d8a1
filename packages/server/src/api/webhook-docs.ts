import { Type } from '@sinclair/typebox';
import { ORDER_FAILED, ORDER_SUCCEEDED } from '../orders/service.js';
import { WEBHOOK_TEST } from '../webhooks/index.js';
import { OrderResource } from './merchant/orders.get.js';

/**
 * The webhooks the service sends, for the OpenAPI document's `webhooks` section (OpenAPI 3.1): each a
 * POST to the merchant's webhook URL, signed the Standard Webhooks way.
 */

const TwoDigitMonth = Type.String({ pattern: '^(0[1-9]|1[0-2])$', examples: ['09'] });
const FourDigitYear = Type.String({ pattern: '^[0-9]{4}$', examples: ['2031'] });

export const PaymentCredentialsWebhook = Type.Object(
  {
    eventName: Type.Literal('PAYMENT_CREDENTIALS'),
    paymentId: Type.String({ description: 'The `paymentId` of the credentials request.' }),
    merchantId: Type.String(),
    merchantReference: Type.String({ description: 'The `merchantReference` of the credentials request.' }),
    cardDetails: Type.Object({
      networkType: Type.String({ description: 'The card network in lower case.', examples: ['visa'] }),
    }),
    billingAddress: Type.Object({
      firstName: Type.String(),
      lastName: Type.String(),
      address1: Type.String(),
      city: Type.String(),
      state: Type.String(),
      country: Type.String(),
      zipCode: Type.String(),
      phoneNumber: Type.String(),
    }),
    credentials: Type.Array(
      Type.Union([
        Type.Object({
          type: Type.Literal('NETWORK_TOKEN'),
          token: Type.String({ description: 'The network token, Luhn-valid, on the card’s network.' }),
          cvv: Type.String({
            description:
              'The token cryptogram (TAVV) for this request only: send it to the processor as the cryptogram, not as a security code.',
          }),
          expirationMonth: TwoDigitMonth,
          expirationYear: FourDigitYear,
        }),
        Type.Object({
          type: Type.Literal('PAN'),
          pan: Type.String({ description: 'The card number.' }),
          expirationMonth: TwoDigitMonth,
          expirationYear: FourDigitYear,
        }),
      ]),
      {
        description:
          'One entry per credential type the merchant is approved for: NETWORK_TOKEN first, then PAN.',
      },
    ),
  },
  { additionalProperties: false },
);

export const OrderEventWebhook = Type.Composite([
  Type.Object({
    eventName: Type.Union([Type.Literal(ORDER_SUCCEEDED), Type.Literal(ORDER_FAILED)]),
    merchantId: Type.String(),
  }),
  OrderResource,
]);

export const WebhookTestWebhook = Type.Object(
  {
    eventName: Type.Literal(WEBHOOK_TEST),
    merchantId: Type.String(),
    sentAt: Type.String({ format: 'date-time', description: 'When it was sent.' }),
  },
  { additionalProperties: false },
);

const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header' as const,
    required: true,
    description: 'The message id: the same on every attempt. Drop a message whose id you have seen.',
    schema: { type: 'string' as const },
  },
  {
    name: 'webhook-timestamp',
    in: 'header' as const,
    required: true,
    description:
      'Seconds since the epoch when this attempt was sent. Refuse a webhook whose timestamp is more than 5 minutes away from your clock, before or after.',
    schema: { type: 'string' as const },
  },
  {
    name: 'webhook-signature',
    in: 'header' as const,
    required: true,
    description:
      'Space-separated `v1,<base64>` signatures, one per webhook secret signing (two or more during a rotation): HMAC-SHA256, under the base64-decoded part of the secret after `whsec_`, of the `webhook-id` header, `.`, the `webhook-timestamp` header, `.` and the body exactly as received, in standard base64. Verify with a Standard Webhooks library, or by hand comparing in constant time (docs/credentials-flow.md), before reading the body.',
    schema: { type: 'string' as const },
  },
];

const ANSWERS = {
  '200': {
    description:
      'Any 2xx within the time-out (15 s by default) counts as delivered. Anything else, a redirect or a time-out is retried with the same `webhook-id`; the body is built again from the vault at each attempt (the same card data, the billing address as it is then).',
  },
};

function webhook(
  operationId: string,
  summary: string,
  description: string,
  schema: object,
  responses: Record<string, { description: string }> = ANSWERS,
) {
  return {
    post: {
      operationId,
      summary,
      description,
      parameters: SIGNATURE_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema } } },
      responses,
    },
  };
}

const ORDER_EVENT_DESCRIPTION =
  'Sent once an order of the default flow reaches its outcome. The body is the order as `GET /orders/{orderId}` returns it, with `eventName` and `merchantId`; confirm the order from it (or from that route) before you ship. Retried on the default schedule (`WEBHOOK_RETRY_DELAYS_MS`: 5 s, 5 min, 30 min, 2 h, 5 h and 10 h apart, about 18 hours in all).';

/** The `webhooks` object of the OpenAPI document. */
export const WEBHOOK_DOCS = {
  PAYMENT_CREDENTIALS: webhook(
    'receivePaymentCredentials',
    'Card credentials for a credentials request',
    'Sent after `POST /payments/credentials` was acknowledged. It carries card data: keep it off your logs, use it to authorize with your processor, then report the processor’s answer to `POST /payments/externalresponse`. Retried on the short credentials schedule (minutes), after which the request is `FAILED`.',
    PaymentCredentialsWebhook,
  ),
  [ORDER_SUCCEEDED]: webhook(
    'receiveOrderSucceeded',
    'An order was paid',
    ORDER_EVENT_DESCRIPTION,
    OrderEventWebhook,
  ),
  [ORDER_FAILED]: webhook(
    'receiveOrderFailed',
    'An order’s payment failed',
    ORDER_EVENT_DESCRIPTION,
    OrderEventWebhook,
  ),
  [WEBHOOK_TEST]: webhook(
    'receiveWebhookTest',
    'A test of your endpoint',
    'Sent only when you call `POST /webhooks/test`, signed like every other; its `webhook-id` starts with `tst_`. The answer to that call reports how your endpoint answered.',
    WebhookTestWebhook,
    { '200': { description: 'Any 2xx within the time-out counts as delivered. It is never retried.' } },
  ),
};
