/** Facts about card numbers the gateway reads without asking anyone: Luhn, network, expiry. */

export function passesLuhn(digits: string): boolean {
  if (!/^\d{2,}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    // From the right, every second digit is doubled; a doubled digit above 9 counts its digits' sum.
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** 12–19 digits: the ISO/IEC 7812 range of primary account numbers (network tokens share it). */
export function isAccountNumber(digits: string): boolean {
  return /^\d{12,19}$/.test(digits) && passesLuhn(digits);
}

/** The network, by issuer identification number prefix; `unknown` routes nowhere in particular. */
export function brandOf(digits: string): string {
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  const three = Number(digits.slice(0, 3));
  if (digits.startsWith('4')) return 'visa';
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
  if (two === 34 || two === 37) return 'amex';
  if (digits.startsWith('6011') || two === 65 || (three >= 644 && three <= 649)) return 'discover';
  return 'unknown';
}

/** A card is good through the last day of its expiry month (UTC). */
export function isExpired(expMonth: number, expYear: number, now: Date): boolean {
  const year = now.getUTCFullYear();
  return expYear < year || (expYear === year && expMonth < now.getUTCMonth() + 1);
}

/** A cryptogram is 20 bytes in canonical base64: 28 characters ending in one `=`. */
export function isWellFormedCryptogram(cryptogram: string): boolean {
  return (
    /^[A-Za-z0-9+/]{27}=$/.test(cryptogram) &&
    Buffer.from(cryptogram, 'base64').toString('base64') === cryptogram
  );
}
