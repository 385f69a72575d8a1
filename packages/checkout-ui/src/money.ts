/**
 * Amounts travel as integer cents (DESIGN.md §4) and are shown as the currency's major unit.
 * The currency is data: USD today, any ISO 4217 code tomorrow.
 */
export function formatMoney(cents: number, currency = 'USD', locale = 'en-US'): string {
  if (!Number.isSafeInteger(cents))
    throw new TypeError(`amount must be an integer number of cents, got ${cents}`);
  const format = new Intl.NumberFormat(locale, { style: 'currency', currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(cents / 10 ** digits);
}
