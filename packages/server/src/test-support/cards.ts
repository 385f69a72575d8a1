import { luhnCheckDigit } from '../vault/vault.js';

/** The `serial`th of a run of valid Visa numbers that no sandbox test card shares. */
export function visaNumber(serial: number): string {
  const payload = `4929${String(serial).padStart(11, '0')}`;
  return payload + luhnCheckDigit(payload);
}
