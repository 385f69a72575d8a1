/** The shop's pages: server-rendered HTML, a little inline script on the checkout page, no framework. */
import { formatMoney, PRODUCTS, type Product } from './catalog.js';
import { Html, html, scriptValue } from './html.js';
import type { CartLine, Flow, StoreOrder } from './state.js';

const STYLE = `
:root{--ink:#111827;--muted:#6b7280;--line:#e5e7eb;--accent:#0f766e;--bad:#b91c1c;--ok:#047857;font:16px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;color:var(--ink)}
*{box-sizing:border-box}body{margin:0;background:#f9fafb}
header{background:#fff;border-bottom:1px solid var(--line)}
header nav{max-width:960px;margin:0 auto;padding:14px 20px;display:flex;gap:20px;align-items:center}
header .brand{font-weight:700;font-size:18px;margin-right:auto;color:var(--ink);text-decoration:none}
a{color:var(--accent)}main{max-width:960px;margin:0 auto;padding:24px 20px 64px}
h1{font-size:28px;margin:0 0 16px}h2{font-size:20px;margin:24px 0 12px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:16px}
.card{background:#fff;border:1px solid var(--line);border-radius:12px;padding:20px}.card>h1:first-child,.card>h2:first-child{margin-top:0}
.price{font-weight:600}.muted{color:var(--muted)}.small{font-size:14px}
table{width:100%;border-collapse:collapse;background:#fff}th,td{text-align:left;padding:10px 12px;border-bottom:1px solid var(--line)}
td.num,th.num{text-align:right}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:10px 18px;border-radius:8px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none}
button.link{background:none;border:none;color:var(--accent);padding:0;font-weight:400;text-decoration:underline}
button:disabled{opacity:.5;cursor:not-allowed}.button.secondary{background:#fff;color:var(--accent)}
label{display:block;font-weight:600;margin:12px 0 4px}input,select{font:inherit;padding:9px 11px;border:1px solid #d1d5db;border-radius:8px;width:100%}
input[type=number]{width:90px}form.inline{display:inline}
.checkout{display:grid;grid-template-columns:1fr 320px;gap:24px}@media(max-width:760px){.checkout{grid-template-columns:1fr}}
.divider{display:flex;align-items:center;gap:12px;color:var(--muted);margin:20px 0}.divider::before,.divider::after{content:"";flex:1;border-top:1px solid var(--line)}
.notice{padding:12px 16px;border-radius:8px;background:#ecfdf5;color:var(--ok);margin:12px 0}.notice.bad{background:#fef2f2;color:var(--bad)}
.status{min-height:1.5em;margin-top:8px}.tag{display:inline-block;padding:2px 8px;border-radius:999px;font-size:13px;background:#f3f4f6}
.tag.PAID{background:#d1fae5;color:var(--ok)}.tag.FAILED{background:#fee2e2;color:var(--bad)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:6px 16px}dt{color:var(--muted)}dd{margin:0}`;

export function layout(title: string, cartCount: number, main: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="data:,">
  <title>${title} · Demo Store</title>
  <style>${new Html(STYLE)}</style>
</head>
<body>
  <header><nav>
    <a class="brand" href="/">Demo Store</a>
    <a href="/">Shop</a>
    <a href="/cart">Cart (${cartCount})</a>
    <a href="/orders">Orders</a>
  </nav></header>
  <main>${main}</main>
</body>
</html>`;
}

export function productListPage(): Html {
  return html`<h1>Shop</h1>
<div class="grid">${PRODUCTS.map(
    (product) => html`<div class="card">
  <h2><a href="/products/${product.sku}">${product.name}</a></h2>
  <p class="muted">${product.description}</p>
  <p class="price">${formatMoney(product.price)}</p>
</div>`,
  )}</div>`;
}

export function productPage(product: Product): Html {
  return html`<p><a href="/">← All products</a></p>
<div class="card">
  <h1>${product.name}</h1>
  <p>${product.description}</p>
  <p class="price">${formatMoney(product.price)}</p>
  <form method="post" action="/cart">
    <input type="hidden" name="sku" value="${product.sku}">
    <label for="quantity">Quantity</label>
    <input id="quantity" name="quantity" type="number" min="1" max="20" value="1" required>
    <p><button type="submit">Add to cart</button></p>
  </form>
</div>`;
}

function linesTable(lines: CartLine[], subtotal: number, removable: boolean): Html {
  return html`<table>
  <thead><tr><th>Item</th><th class="num">Qty</th><th class="num">Amount</th>${removable ? html`<th></th>` : ''}</tr></thead>
  <tbody>${lines.map(
    (line) => html`<tr>
    <td>${line.product.name}</td>
    <td class="num">${line.quantity}</td>
    <td class="num">${formatMoney(line.product.price * line.quantity)}</td>
    ${
      removable
        ? html`<td class="num"><form class="inline" method="post" action="/cart/remove">
        <input type="hidden" name="sku" value="${line.product.sku}">
        <button class="link" type="submit">Remove</button></form></td>`
        : ''
    }
  </tr>`,
  )}</tbody>
  <tfoot><tr><th>Subtotal</th><th></th><th class="num">${formatMoney(subtotal)}</th>${removable ? html`<th></th>` : ''}</tr></tfoot>
</table>`;
}

export function cartPage(lines: CartLine[], subtotal: number): Html {
  if (lines.length === 0) {
    return html`<h1>Your cart</h1><p>Your cart is empty. <a href="/">Find something you like.</a></p>`;
  }
  return html`<h1>Your cart</h1>
${linesTable(lines, subtotal, true)}
<p class="muted small">Shipping and taxes are added at checkout.</p>
<p>
  <a class="button" href="/checkout">Checkout</a>
  <a class="button secondary" href="/checkout/own-processor">Checkout with our own processor</a>
</p>
<p class="muted small">“Checkout”: Wallet Checkout authorizes the payment. “With our own processor”: the
processor-agnostic flow — the shop receives the card's credentials by signed webhook and authorizes itself.</p>`;
}

export interface CheckoutPageInput {
  flow: Flow;
  lines: CartLine[];
  subtotal: number;
  /** Wallet Checkout's base URL, where the SDK is served. */
  serviceUrl: string;
  merchantId: string;
}

export function checkoutPage(input: CheckoutPageInput): Html {
  const sdkUrl = `${input.serviceUrl}/sdk/wallet-sdk.js?merchantId=${encodeURIComponent(input.merchantId)}`;
  const heading = input.flow === 'wallet' ? 'Checkout' : 'Checkout with our own processor';
  return html`<h1>${heading}</h1>
<div class="checkout">
  <section>
    <div class="card">
      <h2>Express checkout</h2>
      <div id="wallet-button"></div>
      <p id="checkout-status" class="status muted" role="status"></p>
    </div>
    <div class="divider">or pay as a guest</div>
    <form id="guest-form" class="card" onsubmit="return false">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="email" required>
      <p id="guest-status" class="status muted small" role="status">We will check whether you have a wallet.</p>
      <label for="name">Full name</label>
      <input id="name" name="name" autocomplete="name">
      <label for="address">Address</label>
      <input id="address" name="address" autocomplete="street-address">
      <p><button type="submit" disabled>Continue as a guest</button></p>
      <p class="muted small">Your shop's own guest checkout goes on here; this demo takes payments with the
      wallet only.</p>
    </form>
  </section>
  <aside class="card">
    <h2>Your order</h2>
    ${linesTable(input.lines, input.subtotal, false)}
    <p class="muted small">Shipping and taxes are chosen in the wallet.</p>
  </aside>
</div>
<script src="${sdkUrl}"></script>
<script>
  const flow = ${scriptValue(input.flow)};
  const checkoutStatus = document.getElementById('checkout-status');
  // The shop's order for the current checkout attempt, made by the shop's server from the cart.
  let current;

  async function postJson(url, body) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { ok: response.ok, status: response.status, body: await response.json().catch(() => ({})) };
  }

  function goToFailure(params) {
    location.assign('/orders/' + encodeURIComponent(current.reference) + '/failure?' + new URLSearchParams(params));
  }

  const options = {
    // The amounts come from the shop's server, never from this page.
    async orderDetailsCallback(actions) {
      const answer = await postJson('/api/orders', { flow });
      if (!answer.ok) throw new Error(answer.body.error || 'the order could not be started');
      current = answer.body;
      await actions.createOrder(current.walletOrder);
    },
    // The page only navigates: the confirmation page's server checks the order with Wallet Checkout.
    success(orderId) {
      location.assign('/orders/' + encodeURIComponent(current.reference) + '/confirmation?orderId=' + encodeURIComponent(orderId));
    },
    error(orderId, errorCode, errorMessage) {
      goToFailure({ orderId, code: errorCode, message: errorMessage ?? '' });
    },
    onClose() {
      checkoutStatus.textContent = 'Checkout closed: your cart is still here.';
      // Whether it opened from the button or from the email, the window it spoke of is gone.
      document.getElementById('guest-status').textContent = '';
    },
  };
  if (flow === 'own-processor') {
    // Merchant authorization mode: the shopper picked a card; the shop's server takes it from here.
    options.onPaymentSelected = async (selection) => {
      checkoutStatus.textContent = 'Authorizing your payment…';
      const answer = await postJson('/api/orders/' + encodeURIComponent(current.reference) + '/authorize', selection);
      if (answer.body.next) return location.assign(answer.body.next);
      goToFailure({ orderId: selection.orderId, code: String(answer.status), message: answer.body.error || 'The payment could not be completed' });
    };
  }
  const button = WalletSDK.Button(options).render('#wallet-button');

  // Guest checkout: a shopper who already has a wallet is offered it as soon as the email is typed.
  const email = document.getElementById('email');
  const guestStatus = document.getElementById('guest-status');
  let lookedUp = '';
  email.addEventListener('blur', async () => {
    const value = email.value.trim();
    if (!value || value === lookedUp || !email.checkValidity()) return;
    lookedUp = value;
    const hasWallet = await button.guestRedirect(value);
    guestStatus.textContent = hasWallet
      ? 'You have a wallet: finish in the window that opened.'
      : 'No wallet for this email: carry on as a guest below.';
  });
</script>`;
}

export function confirmationPage(order: StoreOrder): Html {
  const charged = order.charged;
  return html`<h1>Thank you!</h1>
<div class="notice" role="status">Order ${order.reference} is paid.</div>
<div class="card">
  ${linesTable(order.lines, order.subtotal, false)}
  ${
    charged
      ? html`<dl>
    <dt>Shipping</dt><dd>${formatMoney(charged.shipping)}</dd>
    <dt>Taxes</dt><dd>${formatMoney(charged.taxes)}</dd>
    <dt>Total charged</dt><dd class="price" data-testid="total">${formatMoney(charged.total)}</dd>
    <dt>Confirmed by</dt><dd data-testid="confirmed-by">${order.confirmedBy.join('; ')}</dd>
    <dt>Wallet Checkout order</dt><dd><code>${order.walletOrderId ?? ''}</code></dd>
    <dt>Transaction</dt><dd><code>${order.transactionId ?? ''}</code></dd>
  </dl>`
      : ''
  }
</div>
<p><a href="/">Continue shopping</a> · <a href="/orders">All orders</a></p>`;
}

export function notConfirmedPage(order: StoreOrder, reason: string): Html {
  return html`<h1>We could not confirm your payment</h1>
<div class="notice bad" role="alert">${reason}</div>
<p>Order ${order.reference} is not marked as paid. If you were charged, we will confirm it as soon as
Wallet Checkout tells us; nothing was shipped yet.</p>
<p><a href="/cart">Back to your cart</a></p>`;
}

export interface FailureDetails {
  /** What the page was told (the SDK's `error` callback, or the shop's server in the own-processor flow). */
  code: string;
  message: string;
  /** What Wallet Checkout says about the order, when the shop's server could check it. */
  confirmed?: string;
}

export function failurePage(order: StoreOrder, failure: FailureDetails): Html {
  return html`<h1>Payment failed</h1>
<div class="notice bad" role="alert">
  <strong>Error <span data-testid="error-code">${failure.code}</span></strong>:
  <span data-testid="error-message">${failure.message || 'no message'}</span>
</div>
${failure.confirmed ? html`<p class="muted">${failure.confirmed}</p>` : ''}
<p>Order ${order.reference} was not paid and your cart is unchanged.
<a href="/cart">Back to your cart</a> to try another card.</p>`;
}

export function ordersPage(orders: StoreOrder[]): Html {
  if (orders.length === 0) return html`<h1>Orders</h1><p>No orders yet.</p>`;
  return html`<h1>Orders</h1>
<table>
  <thead><tr><th>Order</th><th>Checkout</th><th>State</th><th class="num">Total</th><th>Confirmed by</th><th>Verified webhooks</th></tr></thead>
  <tbody>${orders.map(
    (order) => html`<tr data-reference="${order.reference}">
    <td>${order.reference}<br><span class="muted small">${order.createdAt.toISOString()}</span></td>
    <td>${order.flow === 'wallet' ? 'Wallet Checkout' : 'Own processor'}</td>
    <td><span class="tag ${order.state}">${order.state}</span>${
      order.failure ? html`<br><span class="small">${order.failure.code} ${order.failure.message}</span>` : ''
    }</td>
    <td class="num">${formatMoney(order.charged?.total ?? order.subtotal)}</td>
    <td class="small">${order.confirmedBy.join('; ')}</td>
    <td class="small">${order.webhooks.join(', ')}</td>
  </tr>`,
  )}</tbody>
</table>`;
}

export function messagePage(title: string, message: string): Html {
  return html`<h1>${title}</h1><p>${message}</p><p><a href="/">Back to the shop</a></p>`;
}
