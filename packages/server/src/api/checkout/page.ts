import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ERROR_STATUS } from '../../errors.js';
import { isCspOrigin, type Merchant } from '../../merchants/index.js';
import type { Order, Orders } from '../../orders/index.js';

/** The checkout UI's built files (packages/checkout-ui), as same-origin URLs, in load order. */
export interface CheckoutAssets {
  scripts: string[];
  styles: string[];
}

const NO_ASSETS: CheckoutAssets = { scripts: [], styles: [] };

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** JSON inside a <script> element: `<` escaped, so no value can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * Only the order's page origin may frame the checkout (DESIGN.md §3); styles and requests stay on our
 * origin. Scripts run only with the page's `nonce`: not every script our origin serves (the API
 * reference's, for one) may run in the checkout, should anything ever slip markup into it.
 */
export function checkoutCsp(frameAncestor: string, nonce: string): string {
  // An origin saved before allowed origins were checked for it (a wildcard, say) frames nothing.
  const ancestor = isCspOrigin(frameAncestor) ? frameAncestor : "'none'";
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
    `frame-ancestors ${ancestor}`,
  ].join('; ');
}

/**
 * The checkout page shell: the order id and the parent origin in a JSON element the UI reads
 * (`#checkout-config`), a loading state in `#checkout`, and the UI bundle's files from `assets`.
 */
export function checkoutPage(order: Order, nonce: string, assets: CheckoutAssets = NO_ASSETS): string {
  const config = { orderId: order.id, merchantId: order.merchantId, parentOrigin: order.origin };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Checkout</title>
${assets.styles.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`).join('\n')}
</head>
<body>
<main id="checkout" aria-busy="true"><p role="status">Loading checkout…</p></main>
<script type="application/json" id="checkout-config">${scriptJson(config)}</script>
${assets.scripts.map((src) => `<script type="module" nonce="${nonce}" src="${escapeHtml(src)}"></script>`).join('\n')}
</body>
</html>
`;
}

function unavailablePage(message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Checkout unavailable</title></head>
<body><main><h1>Checkout unavailable</h1><p>${escapeHtml(message)}</p></main></body>
</html>
`;
}

/**
 * `GET /checkout/:orderId`: the page the SDK opens in its iframe, while the order is open and its origin
 * is still one of the merchant's: one taken off the list (a site the merchant gave up, or lost) frames
 * no checkout from then on, even of an order it created before.
 */
export const checkoutPageRoute =
  (deps: {
    orders: Orders;
    merchants: { get(id: string): Promise<Merchant | undefined> };
    assets?: CheckoutAssets;
  }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/checkout/:orderId',
      {
        schema: {
          hide: true,
          params: Type.Object({ orderId: Type.String({ maxLength: 64 }) }),
        },
      },
      async (request, reply) => {
        const order = await deps.orders.find(request.params.orderId);
        reply.header('referrer-policy', 'no-referrer').type('text/html; charset=utf-8');
        // A page that cannot be shown says why, framable where the checkout would have been (an unknown
        // order has no origin to name).
        const unavailable = (status: number, message: string) =>
          reply
            .status(status)
            .header('content-security-policy', `default-src 'none'; frame-ancestors ${order?.origin ?? '*'}`)
            .send(unavailablePage(message));
        if (!order) return unavailable(ERROR_STATUS.ORDER_NOT_FOUND, 'This checkout does not exist.');
        if (!deps.orders.isOpen(order)) {
          return unavailable(
            ERROR_STATUS.ORDER_NOT_FOUND,
            'This checkout has ended. Close this window and start again from the shop.',
          );
        }
        if (!(await deps.merchants.get(order.merchantId))?.allowedOrigins.includes(order.origin)) {
          return unavailable(
            ERROR_STATUS.ORIGIN_NOT_ALLOWED,
            'This shop no longer offers its checkout on this site. Close this window and start again from the shop.',
          );
        }
        const nonce = randomBytes(16).toString('base64');
        return reply
          .header('content-security-policy', checkoutCsp(order.origin, nonce))
          .send(checkoutPage(order, nonce, deps.assets));
      },
    );
  };
