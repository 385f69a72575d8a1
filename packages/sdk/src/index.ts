/**
 * The SDK for bundlers. The script tag defines `window.WalletSDK` instead (see global.ts), configured by
 * its URL; here the service and the merchant are given in code, once for the page or per button.
 *
 * @example
 * import { WalletSDK } from '@wallet-checkout/sdk';
 * WalletSDK.configure({ serviceUrl: 'https://pay.example.com', merchantId: 'mch_…' });
 * WalletSDK.Button({ orderDetailsCallback, success, error }).render('#wallet-button');
 * // or, without the page-wide setting:
 * WalletSDK({ serviceUrl: 'https://pay.example.com', merchantId: 'mch_…' }).Button(options);
 */
import { createButton, type WalletButton } from './button.js';
import { VERSION } from './version.js';

export type { WalletButton } from './button.js';
export { type CheckoutMessage, isTrustedMessage, MESSAGE_SOURCE } from './messages.js';
export { validateOptions } from './options.js';
export { validateOrder } from './order.js';
export type * from './types.js';
export { VERSION } from './version.js';

/** Where the SDK's buttons check out: the service's base URL and the merchant's id. */
export interface WalletConfig {
  serviceUrl: string;
  merchantId: string;
}

type ButtonConfig = Parameters<typeof createButton>[0];

function buttonConfig(config: WalletConfig): ButtonConfig {
  if (typeof config?.merchantId !== 'string' || config.merchantId === '') {
    throw new TypeError('WalletSDK: merchantId must be your merchant id (mch_…)');
  }
  return { serviceOrigin: new URL(config.serviceUrl).origin, merchantId: config.merchantId };
}

let pageConfig: ButtonConfig | undefined;

/** The interface's constructor, as on the script tag, once `WalletSDK.configure` has named the service. */
function Button(options: unknown): WalletButton {
  if (!pageConfig) {
    throw new TypeError(
      'WalletSDK.Button: call WalletSDK.configure({ serviceUrl, merchantId }) first, or use WalletSDK({ serviceUrl, merchantId }).Button(options)',
    );
  }
  return createButton(pageConfig, options);
}

function sdkFor(config: WalletConfig): { Button(options: unknown): WalletButton } {
  const configured = buttonConfig(config);
  return { Button: (options) => createButton(configured, options) };
}

export const WalletSDK = Object.assign(sdkFor, {
  /** Names the service and merchant of `WalletSDK.Button` for the page, as the script tag's URL does. */
  configure(config: WalletConfig): void {
    pageConfig = buttonConfig(config);
  },
  Button,
  version: VERSION,
});
