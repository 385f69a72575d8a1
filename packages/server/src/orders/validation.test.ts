import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import type { OrderInput } from './types.js';
import { subtotalOf, validateOrder } from './validation.js';

/** The SDK's own check, loaded from its source so both sides run on the same cases. */
const sdk: { validateOrder(input: unknown): unknown } = await import(
  new URL('../../../sdk/src/order.ts', import.meta.url).href
);

function refusal(check: (input: unknown) => unknown, input: unknown): string | undefined {
  try {
    check(input);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const REFUSED: [string, unknown, string][] = [
  ['a non-object order', 'x', 'createOrder: the order must be an object'],
  ['no lineItems', {}, 'lineItems is required and must be an array (it may be empty)'],
  [
    'lineItems not an array',
    { lineItems: {} },
    'lineItems is required and must be an array (it may be empty)',
  ],
  ['an item that is not an object', { lineItems: [3] }, 'lineItems[0] must be an object'],
  [
    'an item without SKU',
    { lineItems: [{ name: 'Tee' }] },
    'lineItems[0].SKU is required and must be a non-empty string',
  ],
  [
    'an item with sku in lower case',
    { lineItems: [{ SKU: 'A' }, { sku: 'B' }] },
    'lineItems[1].SKU is required and must be a non-empty string (the key is written in capitals: SKU)',
  ],
  [
    'an empty SKU',
    { lineItems: [{ SKU: '' }] },
    'lineItems[0].SKU is required and must be a non-empty string',
  ],
  [
    'a long name',
    { lineItems: [{ SKU: 'A', name: 'n'.repeat(201) }] },
    'lineItems[0].name must be at most 200 characters long',
  ],
  ['a number category', { lineItems: [{ SKU: 'A', category: 1 }] }, 'lineItems[0].category must be a string'],
  [
    'a fractional amount',
    { lineItems: [{ SKU: 'A', amount: 25.5 }] },
    'lineItems[0].amount must be an integer number of cents, got 25.5',
  ],
  [
    'an amount as text',
    { lineItems: [{ SKU: 'A', amount: '25' }] },
    'lineItems[0].amount must be an integer number of cents, got "25"',
  ],
  [
    'a negative amount',
    { lineItems: [{ SKU: 'A', amount: -1 }] },
    'lineItems[0].amount must be between 0 and 99999999 cents',
  ],
  [
    'an amount too large',
    { lineItems: [], subtotal: 100_000_000 },
    'subtotal must be between 0 and 99999999 cents',
  ],
  [
    'a fractional total',
    { lineItems: [], total: 9.99 },
    'total must be an integer number of cents, got 9.99',
  ],
  [
    'a subtotal that is not the sum',
    {
      lineItems: [
        { SKU: 'A', amount: 100 },
        { SKU: 'B', amount: 250 },
      ],
      subtotal: 300,
    },
    'subtotal 300 is not the sum of the line item amounts (350)',
  ],
  [
    'a total below the subtotal',
    { lineItems: [], subtotal: 100, total: 90 },
    'total 90 is less than subtotal 100',
  ],
  ['a number orderId', { lineItems: [], orderId: 7 }, 'orderId must be a string'],
  [
    'a long orderId',
    { lineItems: [], orderId: 'o'.repeat(129) },
    'orderId must be at most 128 characters long',
  ],
  [
    'a long orderDescription',
    { lineItems: [], orderDescription: 'd'.repeat(501) },
    'orderDescription must be at most 500 characters long',
  ],
  ['another currency', { lineItems: [], currencyCode: 'EUR' }, 'currencyCode must be one of USD, got "EUR"'],
  [
    'an empty orderId',
    { lineItems: [{ SKU: 'A', amount: 100 }], orderId: '' },
    'orderId must not be empty: leave it out instead',
  ],
];

describe('validateOrder', () => {
  it('accepts an empty lineItems list and keeps only the known fields', () => {
    expect(validateOrder({ lineItems: [] })).toEqual({ lineItems: [] });
    expect(
      validateOrder({
        lineItems: [
          { SKU: 'A', name: 'Tee', amount: 2500, category: 'apparel', colour: 'red' },
          { SKU: 'B' },
        ],
        subtotal: 2500,
        total: 2700,
        orderId: 'order-1',
        orderDescription: 'Two items',
        currencyCode: 'USD',
        extra: true,
      }),
    ).toEqual({
      lineItems: [{ SKU: 'A', name: 'Tee', amount: 2500, category: 'apparel' }, { SKU: 'B' }],
      subtotal: 2500,
      total: 2700,
      orderId: 'order-1',
      orderDescription: 'Two items',
      currencyCode: 'USD',
    });
  });

  it('does not check the sum when an item has no amount', () => {
    expect(() =>
      validateOrder({ lineItems: [{ SKU: 'A', amount: 100 }, { SKU: 'B' }], subtotal: 500 }),
    ).not.toThrow();
  });

  it.each(REFUSED)('refuses %s, naming the field and the rule', (_name, input, message) => {
    let caught: unknown;
    try {
      validateOrder(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DomainError);
    expect((caught as DomainError).message).toBe(message);
    expect((caught as DomainError).status).toBe(400);
  });

  it('says exactly what the SDK says, case by case', () => {
    for (const [, input, message] of REFUSED) {
      expect(refusal(sdk.validateOrder, input)).toBe(message);
      expect(refusal(validateOrder, input)).toBe(message);
    }
    for (const [, input, message] of SUBTOTAL_REFUSED) {
      expect(refusal(sdk.validateOrder, input)).toBe(message);
      expect(refusal((order) => subtotalOf(validateOrder(order)), input)).toBe(message);
    }
  });

  it('answers any input with a valid order or a DomainError, never anything else', () => {
    const value = fc.oneof(fc.jsonValue(), fc.constant(undefined));
    const item = fc.dictionary(fc.constantFrom('SKU', 'sku', 'name', 'amount', 'category', 'x'), value);
    const order = fc.dictionary(
      fc.constantFrom('lineItems', 'subtotal', 'total', 'orderId', 'orderDescription', 'currencyCode'),
      fc.oneof(value, fc.array(fc.oneof(item, value), { maxLength: 4 })),
    );
    fc.assert(
      fc.property(fc.oneof(order, fc.jsonValue()), (input) => {
        try {
          validateOrder(input);
        } catch (error) {
          expect(error).toBeInstanceOf(DomainError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

const SUBTOTAL_REFUSED: [string, OrderInput, string][] = [
  [
    'an empty lineItems list without subtotal',
    { lineItems: [] },
    'subtotal must be at least 1 cent: left out, it is the sum of the line item amounts, here 0',
  ],
  [
    'a total without subtotal or priced items',
    { lineItems: [], total: 2500 },
    'subtotal must be at least 1 cent: left out, it is the sum of the line item amounts, here 0',
  ],
  [
    'line item amounts of 0',
    { lineItems: [{ SKU: 'A', amount: 0 }] },
    'subtotal must be at least 1 cent: left out, it is the sum of the line item amounts, here 0',
  ],
  [
    'a subtotal of 0',
    { lineItems: [{ SKU: 'A' }], subtotal: 0, total: 0 },
    'subtotal must be at least 1 cent: an order must charge something',
  ],
  [
    'an item without an amount and no subtotal',
    { lineItems: [{ SKU: 'A', amount: 2500 }, { SKU: 'B' }], total: 3700 },
    'subtotal is required when a line item has no amount (lineItems[1].amount is missing)',
  ],
  [
    'line item amounts past the limit',
    {
      lineItems: [
        { SKU: 'A', amount: 99_999_999 },
        { SKU: 'B', amount: 1 },
      ],
    },
    'the line item amounts add up to 100000000, more than 99999999 cents',
  ],
];

describe('subtotalOf', () => {
  it("is the merchant's subtotal, else the sum of the line item amounts", () => {
    expect(
      subtotalOf({
        lineItems: [
          { SKU: 'A', amount: 100 },
          { SKU: 'B', amount: 250 },
        ],
      }),
    ).toBe(350);
    expect(subtotalOf({ lineItems: [{ SKU: 'A', amount: 100 }, { SKU: 'B' }], subtotal: 500 })).toBe(500);
    expect(subtotalOf({ lineItems: [], subtotal: 1 })).toBe(1);
  });

  it.each(SUBTOTAL_REFUSED)('refuses %s, naming the field and the rule', (_name, order, message) => {
    let caught: unknown;
    try {
      subtotalOf(order);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DomainError);
    expect((caught as DomainError).message).toBe(message);
    expect((caught as DomainError).status).toBe(400);
  });
});
