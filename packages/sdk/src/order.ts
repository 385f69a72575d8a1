import type { OrderInput } from './types.js';

const SUPPORTED_CURRENCIES = ['USD'];
/** $999,999.99: the service's upper bound for one order. */
const MAX_CENTS = 99_999_999;

function cents(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new Error(`${field} must be an integer number of cents, got ${JSON.stringify(value)}`);
  }
  if (value < 0 || value > MAX_CENTS) throw new Error(`${field} must be between 0 and ${MAX_CENTS} cents`);
  return value;
}

function text(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new Error(`${field} must be a string`);
  if (value.length > max) throw new Error(`${field} must be at most ${max} characters long`);
  return value;
}

/**
 * Checks an order input (interface section 2.6) before it leaves the page, with a message that names the
 * field and the rule. The service checks again; this only saves a round trip and gives clearer errors.
 */
export function validateOrder(input: unknown): OrderInput {
  if (typeof input !== 'object' || input === null)
    throw new Error('createOrder: the order must be an object');
  const order = input as Record<string, unknown>;
  if (!Array.isArray(order.lineItems))
    throw new Error('lineItems is required and must be an array (it may be empty)');
  let sum = 0;
  order.lineItems.forEach((item: unknown, i: number) => {
    const field = `lineItems[${i}]`;
    if (typeof item !== 'object' || item === null) throw new Error(`${field} must be an object`);
    const record = item as Record<string, unknown>;
    if (typeof record.SKU !== 'string' || record.SKU === '') {
      const hint = 'sku' in record || 'Sku' in record ? ' (the key is written in capitals: SKU)' : '';
      throw new Error(`${field}.SKU is required and must be a non-empty string${hint}`);
    }
    text(record.name, `${field}.name`, 200);
    text(record.category, `${field}.category`, 100);
    sum += cents(record.amount, `${field}.amount`) ?? 0;
  });
  const subtotal = cents(order.subtotal, 'subtotal');
  const total = cents(order.total, 'total');
  const everyItemPriced =
    order.lineItems.length > 0 &&
    order.lineItems.every((item) => (item as { amount?: unknown }).amount !== undefined);
  if (subtotal !== undefined && everyItemPriced && subtotal !== sum) {
    throw new Error(`subtotal ${subtotal} is not the sum of the line item amounts (${sum})`);
  }
  if (subtotal !== undefined && total !== undefined && total < subtotal) {
    throw new Error(`total ${total} is less than subtotal ${subtotal}`);
  }
  if (text(order.orderId, 'orderId', 128) === '') {
    throw new Error('orderId must not be empty: leave it out instead');
  }
  text(order.orderDescription, 'orderDescription', 500);
  const currency = text(order.currencyCode, 'currencyCode', 3);
  if (currency !== undefined && !SUPPORTED_CURRENCIES.includes(currency)) {
    throw new Error(
      `currencyCode must be one of ${SUPPORTED_CURRENCIES.join(', ')}, got ${JSON.stringify(currency)}`,
    );
  }
  checkSubtotal(order.lineItems as { amount?: number }[], subtotal, sum);
  return input as OrderInput;
}

/**
 * What the order charges before shipping and taxes: at least 1 cent (a gateway refuses 0), and the
 * merchant's `subtotal` when an item has no amount, which would otherwise count as 0.
 */
function checkSubtotal(lineItems: { amount?: number }[], subtotal: number | undefined, sum: number): void {
  if (subtotal !== undefined) {
    if (subtotal < 1) throw new Error('subtotal must be at least 1 cent: an order must charge something');
    return;
  }
  const unpriced = lineItems.findIndex((item) => item.amount === undefined);
  if (unpriced >= 0) {
    throw new Error(
      `subtotal is required when a line item has no amount (lineItems[${unpriced}].amount is missing)`,
    );
  }
  if (sum > MAX_CENTS)
    throw new Error(`the line item amounts add up to ${sum}, more than ${MAX_CENTS} cents`);
  if (sum < 1) {
    throw new Error(
      'subtotal must be at least 1 cent: left out, it is the sum of the line item amounts, here 0',
    );
  }
}
