/**
 * The demo store's web server: pages, the cart, the two checkouts, server-side order confirmation,
 * webhook receivers and the own-processor payment.
 */
import {
  checkOrder,
  type Order,
  WalletCheckout,
  WalletCheckoutError,
  type WebhookEvent,
} from '@wallet-checkout/node';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { findProduct, shippingPrice, taxFor } from './catalog.js';
import type { Html } from './html.js';
import { WEBHOOK_PATHS } from './merchants.js';
import { payWithOwnProcessor } from './own-processor.js';
import {
  cartPage,
  checkoutPage,
  confirmationPage,
  failurePage,
  layout,
  messagePage,
  notConfirmedPage,
  ordersPage,
  productListPage,
  productPage,
} from './pages.js';
import { Carts, type Flow, MAX_QUANTITY, Orders, type StoreOrder, subtotalOf } from './state.js';
import { CredentialsInbox, webhookReceiver } from './webhooks.js';

/** One Wallet Checkout merchant account, as `merchant create --json` prints it. */
export interface StoreMerchant {
  merchantId: string;
  /** Server-side only. */
  apiKey: string;
  /** `whsec_…`: verifies this account's webhooks. */
  webhookSecret: string;
}

export interface DemoStoreOptions {
  /** Default `localhost` (both 127.0.0.1 and ::1). */
  host?: string;
  /** Default 4001; 0 picks a free port. */
  port?: number;
  /** Wallet Checkout's base URL, as browsers reach it (the SDK is loaded from it). */
  serviceUrl: string;
  /** The "own processor" of the processor-agnostic flow: the sandbox gateway. */
  sandboxGatewayUrl: string;
  merchants: {
    /** Authorization mode `service`: Wallet Checkout authorizes. */
    wallet: StoreMerchant;
    /** Authorization mode `merchant`: the store authorizes with its own processor. */
    ownProcessor: StoreMerchant;
  };
}

export interface DemoStore {
  url: string;
  close(): Promise<void>;
}

export const DEFAULT_PORT = 4001;

const FLOWS: readonly Flow[] = ['wallet', 'own-processor'];

export async function startDemoStore(options: DemoStoreOptions): Promise<DemoStore> {
  const serviceUrl = options.serviceUrl.replace(/\/+$/, '');
  const walletApi = new WalletCheckout({ apiKey: options.merchants.wallet.apiKey, baseUrl: serviceUrl });
  const ownProcessorApi = new WalletCheckout({
    apiKey: options.merchants.ownProcessor.apiKey,
    baseUrl: serviceUrl,
  });
  const inbox = new CredentialsInbox();
  const carts = new Carts();
  const orders = new Orders();
  /** Orders whose own-processor payment is under way: one attempt per order. */
  const paying = new Set<string>();

  const app = Fastify({ logger: false });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  const send = (reply: FastifyReply, request: FastifyRequest, title: string, main: Html, status = 200) =>
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(layout(title, carts.count(cartIdOf(request, reply)), main).value);

  /**
   * Records Wallet Checkout's view of a wallet-flow order (from `GET /orders/{orderId}` or a verified
   * order webhook) and returns why it is not paid, if it is not. Only the server's own records decide
   * what was bought: the amounts must match the cart frozen at checkout.
   */
  function settle(order: StoreOrder, view: Order, via: string): string | undefined {
    const check = checkOrder(view, { merchantOrderId: order.reference, subtotal: order.subtotal });
    if (
      view.merchantOrderId === order.reference &&
      view.status === 'FAILED' &&
      order.state === 'AWAITING_PAYMENT'
    ) {
      order.state = 'FAILED';
      order.walletOrderId = view.orderId;
      order.failure = { code: view.error?.errorCode ?? '-1', message: view.error?.errorMessage ?? '' };
    }
    if (!check.paid) return check.reason;
    const shipping = view.shipping?.amount ?? 0;
    const taxes = view.taxes ?? 0;
    if (order.state === 'AWAITING_PAYMENT') {
      order.state = 'PAID';
      order.walletOrderId = view.orderId;
      order.charged = { total: view.total, shipping, taxes };
      order.transactionId = view.transactionDetails?.gatewayTransactionId;
      carts.empty(order.cartId);
    }
    if (order.state === 'PAID' && !order.confirmedBy.includes(via)) order.confirmedBy.push(via);
    return order.state === 'PAID' ? undefined : `Order ${order.reference} is ${order.state}.`;
  }

  /** The Wallet Checkout account's events: the outcome of each order it authorized. */
  function onWalletEvent(event: WebhookEvent): void {
    if (event.eventName !== 'ORDER_SUCCEEDED' && event.eventName !== 'ORDER_FAILED') return;
    const order = event.merchantOrderId ? orders.get(event.merchantOrderId) : undefined;
    if (order?.flow !== 'wallet') return;
    order.webhooks.push(event.eventName);
    settle(order, event, `${event.eventName} webhook`);
  }

  /** The own-processor account's events: the credentials each payment waits for. */
  function onOwnProcessorEvent(event: WebhookEvent): void {
    if (event.eventName !== 'PAYMENT_CREDENTIALS') return;
    // Only the event's name is recorded: its card data goes to the waiting payment and nowhere else.
    orders.get(event.merchantReference)?.webhooks.push(event.eventName);
    inbox.deliver(event);
  }

  app.register(
    webhookReceiver({
      path: WEBHOOK_PATHS.wallet,
      secret: options.merchants.wallet.webhookSecret,
      handle: onWalletEvent,
    }),
  );
  app.register(
    webhookReceiver({
      path: WEBHOOK_PATHS.ownProcessor,
      secret: options.merchants.ownProcessor.webhookSecret,
      handle: onOwnProcessorEvent,
    }),
  );

  app.get('/', (request, reply) => send(reply, request, 'Shop', productListPage()));

  app.get<{ Params: { sku: string } }>('/products/:sku', (request, reply) => {
    const product = findProduct(request.params.sku);
    if (!product) return send(reply, request, 'Not found', messagePage('Not found', 'No such product.'), 404);
    return send(reply, request, product.name, productPage(product));
  });

  app.get('/cart', (request, reply) => {
    const lines = carts.lines(cartIdOf(request, reply));
    return send(reply, request, 'Cart', cartPage(lines, subtotalOf(lines)));
  });

  app.post<{ Body: Record<string, string> | undefined }>('/cart', (request, reply) => {
    const sku = request.body?.sku ?? '';
    const quantity = Number(request.body?.quantity ?? '1');
    if (!findProduct(sku) || !Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) {
      const message = `Choose a product and a quantity from 1 to ${MAX_QUANTITY}.`;
      return send(reply, request, 'Cannot add', messagePage('Cannot add to cart', message), 400);
    }
    carts.add(cartIdOf(request, reply), sku, quantity);
    return reply.redirect('/cart', 303);
  });

  app.post<{ Body: Record<string, string> | undefined }>('/cart/remove', (request, reply) => {
    carts.remove(cartIdOf(request, reply), request.body?.sku ?? '');
    return reply.redirect('/cart', 303);
  });

  const checkout = (flow: Flow) => (request: FastifyRequest, reply: FastifyReply) => {
    const lines = carts.lines(cartIdOf(request, reply));
    if (lines.length === 0) return reply.redirect('/cart', 303);
    const merchant = flow === 'wallet' ? options.merchants.wallet : options.merchants.ownProcessor;
    const page = checkoutPage({
      flow,
      lines,
      subtotal: subtotalOf(lines),
      serviceUrl,
      merchantId: merchant.merchantId,
    });
    return send(reply, request, 'Checkout', page);
  };
  app.get('/checkout', checkout('wallet'));
  app.get('/checkout/own-processor', checkout('own-processor'));

  /** Freezes the cart into an order and answers the `createOrder` input: the page never sets amounts. */
  app.post<{ Body: { flow?: unknown } | undefined }>('/api/orders', (request, reply) => {
    const flow = request.body?.flow;
    if (!FLOWS.includes(flow as Flow)) {
      return reply.code(400).send({ error: `flow must be one of ${FLOWS.join(', ')}` });
    }
    const cartId = cartIdOf(request, reply);
    const lines = carts.lines(cartId);
    if (lines.length === 0) return reply.code(409).send({ error: 'the cart is empty' });
    const order = orders.create(cartId, flow as Flow, lines);
    return reply.code(201).send({
      reference: order.reference,
      walletOrder: {
        orderId: order.reference,
        orderDescription: `Demo Store order ${order.reference}`,
        currencyCode: 'USD',
        lineItems: lines.map((line) => ({
          SKU: line.product.sku,
          name: line.quantity > 1 ? `${line.product.name} × ${line.quantity}` : line.product.name,
          amount: line.product.price * line.quantity,
          category: line.product.category,
        })),
        subtotal: order.subtotal,
      },
    });
  });

  /** The own-processor flow: the page posts the shopper's selection; the server pays and says where to go. */
  app.post<{ Params: { reference: string }; Body: unknown }>(
    '/api/orders/:reference/authorize',
    async (request, reply) => {
      const order = orders.get(request.params.reference);
      if (order?.flow !== 'own-processor' || order.cartId !== cartIdOf(request, reply)) {
        return reply.code(404).send({ error: `no order ${request.params.reference} in this cart` });
      }
      if (order.state !== 'AWAITING_PAYMENT' || paying.has(order.reference)) {
        return reply.code(409).send({ error: `order ${order.reference} is ${order.state}` });
      }
      const selection = parseSelection(request.body);
      if (typeof selection === 'string') return reply.code(400).send({ error: selection });
      const shipping = shippingPrice(selection.shippingMethod);
      if (shipping === undefined) {
        return reply.code(400).send({ error: "shippingMethod is not one of this shop's shipping methods" });
      }
      // The selection came through the browser: check that its order is this one, for this amount.
      const walletOrder = await ownProcessorApi.orders.find(selection.orderId);
      if (!walletOrder || !matchesSelection(walletOrder, order, selection)) {
        return reply
          .code(409)
          .send({ error: `orderId ${selection.orderId} is not an open order for ${order.reference}` });
      }
      const taxes = taxFor(order.subtotal, selection.taxState);
      const total = order.subtotal + shipping + taxes;

      paying.add(order.reference);
      try {
        const outcome = await payWithOwnProcessor(
          { wallet: ownProcessorApi, inbox, processorUrl: options.sandboxGatewayUrl },
          {
            reference: order.reference,
            sessionId: selection.sessionId,
            paymentId: selection.paymentId,
            amount: total,
          },
        ).catch((error: unknown) => ({
          approved: false as const,
          code: error instanceof WalletCheckoutError ? error.errorCode : 'ERROR',
          message: error instanceof Error ? error.message : 'the payment could not be completed',
        }));
        order.walletOrderId = selection.orderId;
        if (outcome.approved) {
          order.state = 'PAID';
          order.charged = { total, shipping, taxes };
          order.transactionId = outcome.transactionId;
          order.confirmedBy.push(
            'our processor (the sandbox gateway)',
            'reported with POST /payments/externalresponse',
          );
          carts.empty(order.cartId);
          return { next: `/orders/${order.reference}/confirmation` };
        }
        order.state = 'FAILED';
        order.failure = { code: outcome.code, message: outcome.message };
        const query = new URLSearchParams({ code: outcome.code, message: outcome.message });
        return { next: `/orders/${order.reference}/failure?${query}` };
      } finally {
        paying.delete(order.reference);
      }
    },
  );

  app.get<{ Params: { reference: string }; Querystring: { orderId?: string } }>(
    '/orders/:reference/confirmation',
    async (request, reply) => {
      const order = orders.get(request.params.reference);
      if (!order) return send(reply, request, 'Not found', messagePage('Not found', 'No such order.'), 404);
      const orderId = request.query.orderId ?? order.walletOrderId;
      if (order.flow === 'wallet') {
        // Never trust the page's word that it paid: ask Wallet Checkout, with the API key.
        const view = orderId ? await walletApi.orders.find(orderId) : undefined;
        const reason = view
          ? settle(order, view, `GET /orders/${view.orderId}`)
          : `Wallet Checkout has no order ${orderId ?? ''} for this store.`;
        if (reason) return send(reply, request, 'Not confirmed', notConfirmedPage(order, reason), 409);
      }
      if (order.state !== 'PAID') {
        return send(
          reply,
          request,
          'Not confirmed',
          notConfirmedPage(order, `Order ${order.reference} is ${order.state}.`),
          409,
        );
      }
      return send(reply, request, 'Thank you', confirmationPage(order));
    },
  );

  app.get<{
    Params: { reference: string };
    Querystring: { orderId?: string; code?: string; message?: string };
  }>('/orders/:reference/failure', async (request, reply) => {
    const order = orders.get(request.params.reference);
    if (!order) return send(reply, request, 'Not found', messagePage('Not found', 'No such order.'), 404);
    let confirmed: string | undefined;
    if (order.flow === 'wallet' && request.query.orderId) {
      const view = await walletApi.orders.find(request.query.orderId);
      if (view) {
        settle(order, view, `GET /orders/${view.orderId}`);
        confirmed = `Wallet Checkout reports order ${view.orderId} as ${view.status}.`;
      }
    }
    const code = request.query.code ?? order.failure?.code ?? '';
    const message = request.query.message ?? order.failure?.message ?? '';
    return send(reply, request, 'Payment failed', failurePage(order, { code, message, confirmed }));
  });

  app.get('/orders', (request, reply) => send(reply, request, 'Orders', ordersPage(orders.list())));

  await app.listen({ host: options.host ?? 'localhost', port: options.port ?? DEFAULT_PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? DEFAULT_PORT);
  const host = options.host ?? 'localhost';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () => app.close(),
  };
}

/** The cart's id from its cookie, or a new one (set on the answer). */
function cartIdOf(request: FastifyRequest, reply: FastifyReply): string {
  const existing = /(?:^|;\s*)cart=([0-9a-f]{32})(?:;|$)/.exec(request.headers.cookie ?? '')?.[1];
  if (existing) return existing;
  const set = reply.getHeader('set-cookie');
  const pending = typeof set === 'string' ? /^cart=([0-9a-f]{32});/.exec(set)?.[1] : undefined;
  if (pending) return pending;
  const id = Carts.newId();
  reply.header('set-cookie', `cart=${id}; Path=/; HttpOnly; SameSite=Lax`);
  return id;
}

interface Selection {
  orderId: string;
  sessionId: string;
  paymentId: string;
  shippingMethod: { externalId?: string; name?: string } | undefined;
  /** The state taxes are computed for: shipping address, or billing when nothing ships. */
  taxState: string | undefined;
}

/**
 * Whether Wallet Checkout's order is this shop order, still open, and — when the service records the
 * selection on the order — selected with this session and card.
 */
function matchesSelection(walletOrder: Order, order: StoreOrder, selection: Selection): boolean {
  const selected = walletOrder.merchantAuthorization;
  return (
    walletOrder.merchantOrderId === order.reference &&
    walletOrder.subtotal === order.subtotal &&
    (walletOrder.status === 'CREATED' || walletOrder.status === 'PROCESSING') &&
    (!selected || (selected.sessionId === selection.sessionId && selected.paymentId === selection.paymentId))
  );
}

/** The `onPaymentSelected` selection, checked field by field; a string names what is wrong. */
function parseSelection(body: unknown): Selection | string {
  if (typeof body !== 'object' || body === null) return 'the body must be the onPaymentSelected selection';
  const value = body as Record<string, unknown>;
  for (const field of ['orderId', 'sessionId', 'paymentId']) {
    const entry = value[field];
    if (typeof entry !== 'string' || entry.length < 1 || entry.length > 128) {
      return `${field} must be a string of 1 to 128 characters`;
    }
  }
  const field = (object: unknown, key: string): string | undefined => {
    const entry = (object as Record<string, unknown> | null | undefined)?.[key];
    return typeof entry === 'string' ? entry : undefined;
  };
  return {
    orderId: value.orderId as string,
    sessionId: value.sessionId as string,
    paymentId: value.paymentId as string,
    shippingMethod:
      typeof value.shippingMethod === 'object' && value.shippingMethod !== null
        ? { externalId: field(value.shippingMethod, 'externalId'), name: field(value.shippingMethod, 'name') }
        : undefined,
    taxState: field(value.shippingInfo, 'state') ?? field(value.billingInfo, 'state'),
  };
}
