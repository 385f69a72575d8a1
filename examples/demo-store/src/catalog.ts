/**
 * What the shop sells and what it charges for shipping and taxes. Amounts are integer cents, as
 * everywhere in Wallet Checkout. A real shop reads these from its own catalogue.
 */

export interface Product {
  /** Sent to Wallet Checkout as the line item's `SKU`. */
  sku: string;
  name: string;
  description: string;
  /** Integer cents. */
  price: number;
  category: string;
}

export const PRODUCTS: readonly Product[] = [
  {
    sku: 'TEE-ORGANIC',
    name: 'Organic cotton T-shirt',
    description: 'Soft, heavy and made to last. Printed with our little checkout-cart logo.',
    price: 2500,
    category: 'apparel',
  },
  {
    sku: 'MUG-STONEWARE',
    name: 'Stoneware mug',
    description: 'Holds 350 ml of coffee and survives the dishwasher.',
    price: 1200,
    category: 'kitchen',
  },
  {
    sku: 'STICKER-PACK',
    name: 'Sticker pack',
    description: 'Six weatherproof vinyl stickers for laptops and water bottles.',
    price: 500,
    category: 'accessories',
  },
];

export function findProduct(sku: string): Product | undefined {
  return PRODUCTS.find((product) => product.sku === sku);
}

/**
 * Shipping methods and tax rates. Wallet Checkout shows the shopper these (they are set on the merchant
 * account, see `demoMerchantSettings`), and the own-processor flow recomputes the amount from them on
 * the server rather than take it from the page.
 */
export const SHIPPING_METHODS = [
  { externalId: 'ground', name: 'Ground (3–5 days)', price: 500 },
  { externalId: 'express', name: 'Express (next day)', price: 1500 },
] as const;

/** Basis points by US state: 825 = 8.25 %. States not listed are not taxed. */
export const TAX_RATES_BY_STATE: Readonly<Record<string, number>> = { TX: 825 };

/** Tax in cents on `subtotal`, rounded half up, with Wallet Checkout's rule, so both sides agree. */
export function taxFor(subtotal: number, state: string | null | undefined): number {
  const rate = state ? (TAX_RATES_BY_STATE[state.trim().toUpperCase()] ?? 0) : 0;
  const scaled = subtotal * rate + 5_000;
  return (scaled - (scaled % 10_000)) / 10_000;
}

/**
 * The shop's own price for the shipping method the shopper chose: undefined when it is not one of the
 * shop's. Matched by `externalId`, or by name for accounts whose methods got ids assigned by the service
 * (`merchant create --shipping-method NAME=CENTS`). No method chosen (nothing ships) costs 0.
 */
export function shippingPrice(
  chosen: { externalId?: string; name?: string } | undefined,
): number | undefined {
  if (chosen?.externalId === undefined && chosen?.name === undefined) return 0;
  const method =
    SHIPPING_METHODS.find((entry) => entry.externalId === chosen.externalId) ??
    SHIPPING_METHODS.find((entry) => entry.name === chosen.name);
  return method?.price;
}

export function formatMoney(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}
