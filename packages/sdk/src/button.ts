import { closeOrder, createOrder, lookupShopper } from './api.js';
import { type CheckoutMessage, isTrustedMessage } from './messages.js';
import { type Modal, openModal } from './modal.js';
import { validateOptions } from './options.js';
import { validateOrder } from './order.js';
import type { Actions, ButtonOptions, OrderInput } from './types.js';

export interface SdkConfig {
  /** Origin of the Wallet Checkout service, e.g. `https://pay.example.com`. */
  serviceOrigin: string;
  merchantId: string;
}

export interface WalletButton {
  /** Renders the button into an element, an element id, or a `#selector`. */
  render(target: string | Element): WalletButton;
  /**
   * Starts checkout for an email the shopper typed: resolves `true` once the checkout has opened for an
   * email with a wallet (at the one-time-code step) or while one is open already; `false` for an email
   * without one, or when the checkout could not start (after `error`): carry on with your own form.
   */
  guestRedirect(email: string): Promise<boolean>;
}

const BUTTON_STYLE = `
button{display:inline-flex;align-items:center;justify-content:center;gap:8px;min-width:220px;height:48px;padding:0 20px;border-radius:8px;font:600 16px system-ui,sans-serif;cursor:pointer;border:1px solid transparent}
.light{background:#111827;color:#fff}.dark{background:#fff;color:#111827;border-color:#d1d5db}
button:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
button[aria-busy=true]{opacity:.7;cursor:progress}`;

/** Runs a merchant callback without letting it break the SDK: a throw or rejection is reported, not rethrown. */
async function safely(
  name: string,
  callback: ((...args: never[]) => unknown) | undefined,
  ...args: unknown[]
): Promise<void> {
  if (!callback) return;
  try {
    await (callback as (...values: unknown[]) => unknown)(...args);
  } catch (error) {
    console.error(`WalletSDK: the ${name} callback threw`, error);
  }
}

function resolveTarget(target: string | Element): Element {
  if (typeof target !== 'string') {
    if (target instanceof Element) return target;
    throw new TypeError('WalletSDK.Button.render: target must be an element, an element id or a #selector');
  }
  const element = target.startsWith('#') ? document.querySelector(target) : document.getElementById(target);
  if (!element) throw new TypeError(`WalletSDK.Button.render: no element matches "${target}"`);
  return element;
}

/**
 * `WalletSDK.Button(options)`, with or without `new`.
 *
 * @example
 * WalletSDK.Button({
 *   orderDetailsCallback: (actions) => actions.createOrder({ lineItems: [{ SKU: 'TEE-1', name: 'Tee', amount: 2500 }], subtotal: 2500 }),
 *   success: (orderId, customerInfo) => location.assign(`/thanks?order=${orderId}`),
 *   error: (orderId, errorCode, errorMessage) => showError(errorCode, errorMessage),
 * }).render('#wallet-button');
 */
export function createButton(config: SdkConfig, rawOptions: unknown): WalletButton {
  const options: ButtonOptions = validateOptions(rawOptions);
  let busy = false;
  let rendered: HTMLButtonElement | undefined;

  const setLoading = (loading: boolean) => {
    if (!rendered) return;
    rendered.setAttribute('aria-busy', String(loading));
    rendered.disabled = loading;
  };

  /**
   * Opens the checkout for a new order. Resolves true once it has started (its order exists and the
   * checkout loads, or the shopper closed it meanwhile), false when it could not start (after `error`).
   */
  async function checkout(email?: string): Promise<boolean> {
    busy = true;
    let orderId = '';
    let finished = false;
    let modal: Modal | undefined;
    const finish = () => {
      finished = true;
      window.removeEventListener('message', onMessage);
      // The button is enabled again before the modal gives it focus back.
      busy = false;
      setLoading(false);
      modal?.close();
    };
    const dismiss = () => {
      if (finished) return;
      finish();
      void safely('onClose', options.onClose);
    };
    const onMessage = (event: MessageEvent) => {
      if (finished || !modal || !isTrustedMessage(event, config.serviceOrigin, modal.frameWindow)) return;
      const message = event.data as CheckoutMessage;
      switch (message.type) {
        case 'ready':
          return modal.ready();
        case 'close':
          return dismiss();
        case 'success':
          finish();
          return void safely(
            'success',
            options.success,
            message.orderId,
            message.customerInfo,
            message.shippingInfo,
            message.billingInfo,
            message.shippingMethod,
            message.taxes,
            message.transactionDetails,
          );
        case 'error':
          finish();
          return void safely(
            'error',
            options.error,
            message.orderId,
            message.errorCode,
            message.errorMessage,
          );
        case 'payment-selected':
          finish();
          if (!options.onPaymentSelected) {
            console.error(
              'WalletSDK: this merchant authorizes payments itself; pass options.onPaymentSelected',
            );
          }
          return void safely('onPaymentSelected', options.onPaymentSelected, message.selection);
        default: {
          const unreachable: never = message;
          return unreachable;
        }
      }
    };

    // The modal first, so it notes the focused button before the loading state disables it.
    modal = openModal(dismiss);
    setLoading(true);
    window.addEventListener('message', onMessage);
    let created: Promise<string> | undefined;
    /** The merchant's `getOrderId`, started the moment its order exists. */
    let told: Promise<void> | undefined;
    const actions: Actions = {
      createOrder(input: OrderInput) {
        if (created) {
          return Promise.reject(
            new Error('actions.createOrder was already called: one checkout creates one order'),
          );
        }
        created = (async () => {
          const order = validateOrder(input);
          ({ orderId } = await createOrder(config.serviceOrigin, config.merchantId, order));
          // As soon as the order exists; not awaited, so a getOrderId that waits on this order cannot hold it.
          told = safely('getOrderId', options.getOrderId, orderId);
          return orderId;
        })();
        return created;
      },
    };
    // Whatever a callback throws, `undefined` included, is a failure: a flag, not the value, says so.
    let failed = false;
    let failure: unknown;
    try {
      await options.orderDetailsCallback(actions);
      // Its own failure, even where the callback caught it or did not wait for it.
      await created;
      if (!orderId) throw new Error('orderDetailsCallback must call actions.createOrder(order)');
    } catch (error) {
      failed = true;
      failure = error;
      // An order the callback started without waiting for it may still be on its way.
      await created?.catch(() => {});
    }
    // getOrderId has run before the checkout opens or the order is abandoned.
    await told;
    if (!failed && !finished) {
      const fragment = email ? `#email=${encodeURIComponent(email)}` : '';
      modal.load(`${config.serviceOrigin}/checkout/${encodeURIComponent(orderId)}${fragment}`);
      setLoading(false);
      return true;
    }
    // Closed while it was being created (onClose has run), or the checkout could not start: not left open.
    if (orderId) closeOrder(config.serviceOrigin, orderId);
    if (!failed) return true;
    console.error('WalletSDK: checkout could not start:', failure);
    if (finished) return true;
    finish();
    await safely(
      'error',
      options.error,
      orderId,
      '-1',
      failure instanceof Error ? failure.message : String(failure),
    );
    return false;
  }

  const button: WalletButton = {
    render(target) {
      const host = resolveTarget(target);
      const root = (host.shadowRoot ?? host.attachShadow({ mode: 'open' })) as ShadowRoot;
      const style = document.createElement('style');
      style.textContent = BUTTON_STYLE;
      rendered = document.createElement('button');
      rendered.type = 'button';
      rendered.className = options.theme ?? 'light';
      rendered.textContent = 'Pay with Wallet';
      rendered.setAttribute('aria-busy', 'false');
      rendered.addEventListener('click', () => {
        if (!busy) void checkout();
      });
      root.replaceChildren(style, rendered);
      return button;
    },
    async guestRedirect(email) {
      if (typeof email !== 'string' || !email.includes('@')) return false;
      if (busy) return true;
      const { known } = await lookupShopper(config.serviceOrigin, config.merchantId, email.trim());
      if (!known) return false;
      return checkout(email.trim());
    },
  };
  return button;
}
