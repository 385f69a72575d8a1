import type { ButtonOptions } from './types.js';

const REQUIRED = ['orderDetailsCallback', 'success', 'error'] as const;
const OPTIONAL = ['getOrderId', 'onClose', 'onPaymentSelected'] as const;

/** Throws a TypeError naming the first option that is missing or not a function. */
export function validateOptions(options: unknown): ButtonOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      'WalletSDK.Button: options must be an object with orderDetailsCallback, success and error',
    );
  }
  const record = options as Record<string, unknown>;
  for (const name of REQUIRED) {
    if (typeof record[name] !== 'function') {
      throw new TypeError(`WalletSDK.Button: options.${name} is required and must be a function`);
    }
  }
  for (const name of OPTIONAL) {
    if (record[name] !== undefined && typeof record[name] !== 'function') {
      throw new TypeError(`WalletSDK.Button: options.${name} must be a function`);
    }
  }
  if (record.theme !== undefined && record.theme !== 'light' && record.theme !== 'dark') {
    throw new TypeError('WalletSDK.Button: options.theme must be "light" or "dark"');
  }
  return options as ButtonOptions;
}
