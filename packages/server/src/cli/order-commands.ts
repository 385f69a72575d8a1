/**
 * `order show` and `order list`: a merchant's orders as an operator supporting it sees them. Never the
 * shopper's email (that is `shopper show`, which is audited) nor the gateway's raw response, which may
 * echo card data; the transaction ids are there, to find the payment at the gateway.
 */
import { NotFoundError } from '../errors.js';
import { dollars } from '../money.js';
import { ORDER_STATES, type Order, type OrderState, orderRecords } from '../orders/index.js';
import { Webhooks } from '../webhooks/index.js';
import {
  type Command,
  defineCommand,
  requiredOption,
  stringOption,
  timeOption,
  wholeNumberOption,
} from './args.js';
import { jsonTime, table } from './output.js';

const cents = (amount: number | null): string => (amount === null ? '-' : dollars(amount));

/**
 * What an operator may see of an order: the merchant's view without the shopper's email or raw response,
 * times in ISO 8601.
 */
function orderView(order: Order) {
  const { payment, transactionDetails } = order;
  return {
    orderId: order.id,
    merchantId: order.merchantId,
    merchantOrderId: order.merchantOrderId,
    status: order.status,
    origin: order.origin,
    subtotal: order.subtotal,
    shipping: payment?.shippingAmount ?? null,
    taxes: payment?.taxAmount ?? null,
    total: payment?.chargedAmount ?? order.total,
    shopperId: payment?.shopperId ?? null,
    paymentId: payment?.paymentId ?? null,
    gatewayTransactionId: transactionDetails?.gatewayTransactionId ?? null,
    networkTransactionId: transactionDetails?.networkTransactionId ?? null,
    error: order.error,
    sessionId: order.merchantAuthorization?.sessionId ?? null,
    createdAt: jsonTime(order.createdAt),
    updatedAt: jsonTime(order.updatedAt),
    expiresAt: jsonTime(order.expiresAt),
  };
}

const orderShow = defineCommand<string>({
  name: 'order show',
  summary: 'Show an order, whichever merchant it is of, with the webhooks sent about it.',
  positionals: ['orderId'],
  details: [
    "The shopper's email and the gateway's raw response are not shown: `shopper show` (audited) answers a",
    'question about the shopper, and the merchant has the response. With --json: {"order": {…, times in ISO 8601},',
    '"webhooks": [{"id", "eventName", "state", "attemptCount", "lastError", "createdAt"}]}.',
  ],
  prepare: ({ positionals }) => positionals[0] as string,
  async execute(context, orderId) {
    const order = await orderRecords(context.db, context.keyRing).find(orderId);
    if (!order) throw new NotFoundError('ORDER_NOT_FOUND', `order ${orderId} was not found.`);
    const webhooks = new Webhooks({ db: context.db, dispatcher: { wake: () => undefined } });
    const messages = (await webhooks.list(order.merchantId, { subjectId: order.id })).map((message) => ({
      id: message.id,
      eventName: message.eventName,
      state: message.state,
      attemptCount: message.attemptCount,
      lastError: message.lastError,
      createdAt: jsonTime(message.createdAt),
    }));
    const view = orderView(order);
    const merchant = await context.merchants.get(order.merchantId);
    const text = [
      `order:        ${view.orderId}${view.merchantOrderId ? ` (the merchant's ${view.merchantOrderId})` : ''}`,
      `merchant:     ${merchant?.name ?? '(deleted)'} (${view.merchantId}), from ${view.origin}`,
      `status:       ${view.status}${view.error ? `: ${view.error.code} ${view.error.message ?? ''}`.trimEnd() : ''}`,
      `amounts:      subtotal ${cents(view.subtotal)}, shipping ${cents(view.shipping)}, taxes ${cents(view.taxes)}, total ${cents(view.total)}`,
      `shopper:      ${view.shopperId ?? '-'}, card ${view.paymentId ?? '-'}`,
      `gateway:      ${view.gatewayTransactionId ?? '-'} (network ${view.networkTransactionId ?? '-'})`,
      ...(view.sessionId ? [`session:      ${view.sessionId} (merchant authorization)`] : []),
      `created:      ${view.createdAt}; updated ${view.updatedAt}; expires ${view.expiresAt}`,
      '',
      messages.length === 0
        ? 'No webhooks about it.'
        : table(
            ['webhook', 'event', 'state', 'attempts', 'last error'],
            messages.map((message) => [
              message.id,
              message.eventName,
              message.state,
              String(message.attemptCount),
              message.lastError ?? '-',
            ]),
          ),
    ].join('\n');
    context.print(text, { order: view, webhooks: messages });
    return 0;
  },
});

interface ListInput {
  merchantId: string;
  status?: OrderState;
  createdSince?: number;
  limit: number;
}

const orderList = defineCommand<ListInput>({
  name: 'order list',
  summary: "List a merchant's orders, newest first.",
  options: {
    merchant: { type: 'string', value: 'ID', description: 'the merchant (required)' },
    status: {
      type: 'string',
      value: 'STATUS',
      choices: ORDER_STATES,
      description: `only orders in it: ${ORDER_STATES.join(', ')}`,
    },
    since: {
      type: 'string',
      value: 'TIME',
      description: 'only orders created at or after this RFC 3339 time',
    },
    limit: { type: 'string', value: 'N', description: 'at most N orders (default 20, at most 100)' },
  },
  details: ['With --json: {"orders": [{… as order show, times in ISO 8601}]}.'],
  prepare({ values }) {
    const command = 'order list';
    const status = stringOption(values, 'status');
    const createdSince = timeOption(values, 'since', command);
    return {
      merchantId: requiredOption(values, 'merchant', command),
      ...(status === undefined ? {} : { status: status as OrderState }),
      ...(createdSince === undefined ? {} : { createdSince }),
      limit: wholeNumberOption(values, 'limit', { min: 1, max: 100 }, command) ?? 20,
    };
  },
  async execute(context, input) {
    const { merchantId, ...filter } = input;
    if (!(await context.merchants.get(merchantId))) {
      throw new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${merchantId} was not found.`);
    }
    const page = await orderRecords(context.db, context.keyRing).listPage(merchantId, filter);
    const orders = page.data.map(orderView);
    const text =
      orders.length === 0
        ? 'No orders match.'
        : table(
            ['order', 'merchant order', 'status', 'total', 'created'],
            orders.map((order) => [
              order.orderId,
              order.merchantOrderId ?? '-',
              order.status,
              cents(order.total),
              order.createdAt,
            ]),
          ) + (page.hasMore ? `\n(more: narrow with --since or --status, or raise --limit)` : '');
    context.print(text, { orders });
    return 0;
  },
});

export const ORDER_COMMANDS: Command[] = [orderShow, orderList];
