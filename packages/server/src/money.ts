/** Amounts as people read them. Orders and payments are in USD only. */

/** `$1,062,499.99` for 106249999 cents. */
export function dollars(cents: number): string {
  return (cents / 100).toLocaleString('en-US', { style: 'currency', currency: 'USD' });
}
