/**
 * The SDK for bundlers. The script tag defines `window.WalletSDK` instead (see global.ts).
 *
 * @example
 * import { WalletSDK } from '@wallet-checkout/sdk';
 * const wallet = WalletSDK({ serviceUrl: 'https://pay.example.com', merchantId: 'mch_…' });
 * wallet.Button({ orderDetailsCallback, success, error }).render('#wallet-button');
 */
import { createButton, type WalletButton } from './button.js';

export type { WalletButton } from './button.js';
export { type CheckoutMessage, isTrustedMessage, MESSAGE_SOURCE } from './messages.js';
export { validateOptions } from './options.js';
export { validateOrder } from './order.js';
export type * from './types.js';
export { VERSION } from './version.js';

export function WalletSDK(config: { serviceUrl: string; merchantId: string }): {
  Button(options: unknown): WalletButton;
} {
  const serviceOrigin = new URL(config.serviceUrl).origin;
  return { Button: (options) => createButton({ serviceOrigin, merchantId: config.merchantId }, options) };
}
