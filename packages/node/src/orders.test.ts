import { describe, expect, it } from 'vitest';
import { checkOrder } from './orders.js';
import type { Order } from './types.js';

const paid: Order = {
  orderId: 'ord_1',
  merchantOrderId: 'DS-1001',
  status: 'SUCCEEDED',
  currency: 'USD',
  lineItems: [{ SKU: 'TEE', amount: 2500 }],
  subtotal: 2500,
  total: 3305,
  description: null,
  email: 'test.shopper@example.com',
  shipping: { addressId: 'adr_1', method: { externalId: 'ground', name: 'Ground', price: 599 }, amount: 599 },
  taxes: 206,
  transactionDetails: { networkTransactionId: null, gatewayTransactionId: 'gw_1', gatewayResponse: {} },
  error: null,
  merchantAuthorization: null,
  expiresAt: '2026-11-27T08:30:00.000Z',
  createdAt: '2026-11-27T08:00:00.000Z',
  updatedAt: '2026-11-27T08:01:00.000Z',
};
const expected = { merchantOrderId: 'DS-1001', subtotal: 2500 };

describe('checkOrder', () => {
  it('passes your order, SUCCEEDED, for your subtotal with its shipping and taxes', () => {
    expect(checkOrder(paid, expected)).toEqual({ paid: true });
    expect(checkOrder({ ...paid, shipping: null, taxes: null, total: 2500 }, expected)).toEqual({
      paid: true,
    });
  });

  it.each([
    [
      'another order of yours',
      { ...paid, merchantOrderId: 'DS-1002' },
      /^Order ord_1 is for order DS-1002, not DS-1001\.$/,
    ],
    ['an order made without your id', { ...paid, merchantOrderId: null }, /is for no order id of yours/],
    [
      'a payment still open',
      { ...paid, status: 'CREATED' as const },
      /^Order ord_1 is CREATED, not SUCCEEDED\.$/,
    ],
    [
      'a declined payment',
      { ...paid, status: 'FAILED' as const, error: { errorCode: '990', errorMessage: 'Card was declined' } },
      /^Order ord_1 is FAILED \(990: Card was declined\), not SUCCEEDED\.$/,
    ],
    [
      'another subtotal',
      { ...paid, subtotal: 100, total: 905 },
      /subtotal of 100 USD cents, not the 2500 USD expected/,
    ],
    ['another currency', { ...paid, currency: 'EUR' }, /2500 EUR cents, not the 2500 USD expected/],
    [
      'a total that does not add up',
      { ...paid, total: 99 },
      /total of 99 cents, not its subtotal, shipping and taxes \(3305\)/,
    ],
  ])('refuses %s, saying why', (_name, order, reason) => {
    const check = checkOrder(order, expected);
    expect(check.paid).toBe(false);
    expect(check.paid === false && check.reason).toMatch(reason);
  });
});
