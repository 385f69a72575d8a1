import { ValidationError } from '../errors.js';
import { assertSupportedCurrency } from '../payments/currency.js';
import type { LineItem, OrderInput } from './types.js';

/** $999,999.99: the upper bound of one order, in cents. */
export const MAX_CENTS = 99_999_999;

/*
 * The rules and messages of validateOrder, then subtotalOf, are the SDK's (packages/sdk/src/order.ts),
 * word for word, so a merchant sees the same sentence whether the browser or the service refused the
 * order; validation.test.ts runs both on the same cases.
 */

function cents(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new ValidationError(`${field} must be an integer number of cents, got ${JSON.stringify(value)}`);
  }
  if (value < 0 || value > MAX_CENTS) {
    throw new ValidationError(`${field} must be between 0 and ${MAX_CENTS} cents`);
  }
  return value;
}

function text(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string`);
  if (value.length > max) throw new ValidationError(`${field} must be at most ${max} characters long`);
  return value;
}

function lineItem(item: unknown, index: number): LineItem {
  const field = `lineItems[${index}]`;
  if (typeof item !== 'object' || item === null) {
    throw new ValidationError(`${field} must be an object`);
  }
  const record = item as Record<string, unknown>;
  if (typeof record.SKU !== 'string' || record.SKU === '') {
    const hint = 'sku' in record || 'Sku' in record ? ' (the key is written in capitals: SKU)' : '';
    throw new ValidationError(`${field}.SKU is required and must be a non-empty string${hint}`);
  }
  const name = text(record.name, `${field}.name`, 200);
  const category = text(record.category, `${field}.category`, 100);
  const amount = cents(record.amount, `${field}.amount`);
  return {
    SKU: record.SKU,
    ...(name !== undefined && { name }),
    ...(amount !== undefined && { amount }),
    ...(category !== undefined && { category }),
  };
}

/**
 * Checks an order input (interface section 2.6, amounts in integer cents per DESIGN.md §4) and returns
 * it with only the known fields. Throws `VALIDATION_ERROR` (or `UNSUPPORTED_CURRENCY`) naming the field
 * and the rule.
 */
export function validateOrder(input: unknown): OrderInput {
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError('createOrder: the order must be an object');
  }
  const order = input as Record<string, unknown>;
  if (!Array.isArray(order.lineItems)) {
    throw new ValidationError('lineItems is required and must be an array (it may be empty)');
  }
  const lineItems = order.lineItems.map(lineItem);
  const sum = lineItems.reduce((total, item) => total + (item.amount ?? 0), 0);
  const subtotal = cents(order.subtotal, 'subtotal');
  const total = cents(order.total, 'total');
  const everyItemPriced = lineItems.length > 0 && lineItems.every((item) => item.amount !== undefined);
  if (subtotal !== undefined && everyItemPriced && subtotal !== sum) {
    throw new ValidationError(`subtotal ${subtotal} is not the sum of the line item amounts (${sum})`);
  }
  if (subtotal !== undefined && total !== undefined && total < subtotal) {
    throw new ValidationError(`total ${total} is less than subtotal ${subtotal}`);
  }
  const orderId = text(order.orderId, 'orderId', 128);
  // An empty id could not be looked up (`GET /orders?merchantOrderId=`): left out is what it means.
  if (orderId === '') throw new ValidationError('orderId must not be empty: leave it out instead');
  const orderDescription = text(order.orderDescription, 'orderDescription', 500);
  const currencyCode = text(order.currencyCode, 'currencyCode', 3);
  if (currencyCode !== undefined) assertSupportedCurrency(currencyCode, 'currencyCode');
  return {
    lineItems,
    ...(subtotal !== undefined && { subtotal }),
    ...(total !== undefined && { total }),
    ...(orderId !== undefined && { orderId }),
    ...(orderDescription !== undefined && { orderDescription }),
    ...(currencyCode !== undefined && { currencyCode }),
  };
}

/**
 * The subtotal an order charges: the merchant's, or else the sum of the line item amounts. An item
 * without an amount would count 0 in that sum and the shopper would pay too little, so it needs the
 * merchant's `subtotal`; a sum may not pass MAX_CENTS; and an order must charge at least 1 cent, as a
 * gateway refuses a payment of 0.
 */
export function subtotalOf(order: OrderInput): number {
  if (order.subtotal !== undefined) {
    if (order.subtotal < 1) {
      throw new ValidationError('subtotal must be at least 1 cent: an order must charge something');
    }
    return order.subtotal;
  }
  let sum = 0;
  for (const [index, item] of order.lineItems.entries()) {
    if (item.amount === undefined) {
      throw new ValidationError(
        `subtotal is required when a line item has no amount (lineItems[${index}].amount is missing)`,
      );
    }
    sum += item.amount;
  }
  if (sum > MAX_CENTS) {
    throw new ValidationError(`the line item amounts add up to ${sum}, more than ${MAX_CENTS} cents`);
  }
  if (sum < 1) {
    throw new ValidationError(
      'subtotal must be at least 1 cent: left out, it is the sum of the line item amounts, here 0',
    );
  }
  return sum;
}
