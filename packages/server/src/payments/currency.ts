import { DomainError } from '../errors.js';

/** The currencies a payment or an order may be in (interface section 8). */
export const SUPPORTED_CURRENCIES = ['USD'] as const;

/**
 * Refuses a currency the service does not take with `UNSUPPORTED_CURRENCY`, naming the field and what
 * was sent: a code in the wrong case (`usd`) is refused the same way as one that is not supported.
 */
export function assertSupportedCurrency(value: string, field = 'currency'): void {
  if ((SUPPORTED_CURRENCIES as readonly string[]).includes(value)) return;
  throw new DomainError(
    'UNSUPPORTED_CURRENCY',
    `${field} must be one of ${SUPPORTED_CURRENCIES.join(', ')}, got ${JSON.stringify(value)}`,
  );
}
