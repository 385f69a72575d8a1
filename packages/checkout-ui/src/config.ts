/**
 * What the page knows before any request: the order id, its merchant and the merchant page's origin, written by the server
 * into `<script type="application/json" id="checkout-config">`, and the shopper's email from the URL fragment
 * (`#email=`, set by the SDK's guestRedirect; a fragment never reaches a server log).
 */
export type Theme = 'light' | 'dark';

export interface CheckoutConfig {
  orderId: string;
  /** The shop whose checkout this is: its device memory is its own. */
  merchantId: string;
  /** The only origin this page ever posts messages to. */
  parentOrigin: string;
  email: string | null;
  /** A forced theme; null follows the shopper's `prefers-color-scheme`. */
  theme: Theme | null;
}

const asTheme = (value: unknown): Theme | null => (value === 'light' || value === 'dark' ? value : null);

/** `https://shop.example` exactly as `URL.origin` writes it; `*`, `null` and paths are refused. */
export function isOrigin(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

export function parseConfig(json: string | null | undefined, hash: string, search: string): CheckoutConfig {
  let raw: { orderId?: unknown; merchantId?: unknown; parentOrigin?: unknown; theme?: unknown };
  try {
    raw = JSON.parse(json ?? '');
  } catch {
    throw new Error('The checkout page has no configuration.');
  }
  if (typeof raw?.orderId !== 'string' || raw.orderId === '')
    throw new Error('The checkout has no order id.');
  if (typeof raw.merchantId !== 'string' || raw.merchantId === '')
    throw new Error('The checkout does not know its shop.');
  if (!isOrigin(raw.parentOrigin)) throw new Error('The checkout does not know the shop’s address.');
  const fragment = new URLSearchParams(hash.replace(/^#/, ''));
  const query = new URLSearchParams(search);
  const email = fragment.get('email')?.trim() || null;
  return {
    orderId: raw.orderId,
    merchantId: raw.merchantId,
    parentOrigin: raw.parentOrigin,
    email: email?.includes('@') ? email : null,
    theme: asTheme(query.get('theme')) ?? asTheme(raw.theme),
  };
}
