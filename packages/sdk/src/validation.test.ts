import { describe, expect, it } from 'vitest';
import { isTrustedMessage, MESSAGE_SOURCE } from './messages.js';
import { validateOptions } from './options.js';
import { validateOrder } from './order.js';

const noop = () => {};

describe('validateOptions', () => {
  it('accepts the three required callbacks and the optional ones', () => {
    const options = {
      orderDetailsCallback: noop,
      success: noop,
      error: noop,
      theme: 'dark',
      getOrderId: noop,
      onClose: noop,
    };
    expect(validateOptions(options)).toBe(options);
  });

  it.each(['orderDetailsCallback', 'success', 'error'])('throws a TypeError naming a missing %s', (name) => {
    const options: Record<string, unknown> = { orderDetailsCallback: noop, success: noop, error: noop };
    delete options[name];
    expect(() => validateOptions(options)).toThrow(
      new TypeError(`WalletSDK.Button: options.${name} is required and must be a function`),
    );
    options[name] = 'not a function';
    expect(() => validateOptions(options)).toThrow(TypeError);
  });

  it('names an optional callback that is not a function, and a bad theme', () => {
    const base = { orderDetailsCallback: noop, success: noop, error: noop };
    expect(() => validateOptions({ ...base, onClose: 1 })).toThrow('options.onClose must be a function');
    expect(() => validateOptions({ ...base, theme: 'blue' })).toThrow(
      'options.theme must be "light" or "dark"',
    );
    expect(() => validateOptions(undefined)).toThrow(TypeError);
  });
});

describe('validateOrder', () => {
  it('accepts an empty lineItems list with a subtotal, and a full order', () => {
    expect(() => validateOrder({ lineItems: [], subtotal: 2500 })).not.toThrow();
    expect(() =>
      validateOrder({
        lineItems: [
          { SKU: 'A', name: 'Tee', amount: 2500, category: 'apparel' },
          { SKU: 'B', amount: 500 },
        ],
        subtotal: 3000,
        total: 3500,
        orderId: 'order-1',
        orderDescription: 'Two items',
        currencyCode: 'USD',
      }),
    ).not.toThrow();
  });

  it.each([
    [{}, 'lineItems is required and must be an array (it may be empty)'],
    [{ lineItems: {} }, 'lineItems is required and must be an array'],
    [{ lineItems: [{ name: 'x' }] }, 'lineItems[0].SKU is required and must be a non-empty string'],
    [{ lineItems: [{ sku: 'x' }] }, '(the key is written in capitals: SKU)'],
    [
      { lineItems: [{ SKU: 'x', amount: 25.5 }] },
      'lineItems[0].amount must be an integer number of cents, got 25.5',
    ],
    [{ lineItems: [{ SKU: 'x', amount: '25' }] }, 'lineItems[0].amount must be an integer number of cents'],
    [{ lineItems: [{ SKU: 'x', amount: -1 }] }, 'lineItems[0].amount must be between 0 and 99999999 cents'],
    [
      { lineItems: [{ SKU: 'x', amount: 100 }], subtotal: 90 },
      'subtotal 90 is not the sum of the line item amounts (100)',
    ],
    [{ lineItems: [], subtotal: 100, total: 90 }, 'total 90 is less than subtotal 100'],
    [{ lineItems: [], currencyCode: 'EUR' }, 'currencyCode must be one of USD, got "EUR"'],
    [{ lineItems: [], orderId: 7 }, 'orderId must be a string'],
  ])('rejects %j: %s', (order, message) => {
    expect(() => validateOrder(order)).toThrow(message);
  });
});

describe('isTrustedMessage', () => {
  const frame = { name: 'our iframe' };
  const data = { source: MESSAGE_SOURCE, type: 'success' };
  const service = 'https://pay.example.com';

  it('trusts only the service origin and our own iframe', () => {
    expect(isTrustedMessage({ origin: service, source: frame, data }, service, frame)).toBe(true);
    expect(isTrustedMessage({ origin: 'https://evil.example', source: frame, data }, service, frame)).toBe(
      false,
    );
    expect(
      isTrustedMessage({ origin: service, source: { name: 'another frame' }, data }, service, frame),
    ).toBe(false);
    expect(isTrustedMessage({ origin: service, source: null, data }, service, null)).toBe(false);
  });

  it('ignores messages that are not ours', () => {
    expect(isTrustedMessage({ origin: service, source: frame, data: 'hello' }, service, frame)).toBe(false);
    expect(
      isTrustedMessage(
        { origin: service, source: frame, data: { source: 'other', type: 'success' } },
        service,
        frame,
      ),
    ).toBe(false);
    expect(
      isTrustedMessage(
        { origin: service, source: frame, data: { source: MESSAGE_SOURCE, type: 'pwn' } },
        service,
        frame,
      ),
    ).toBe(false);
  });
});
