import type { TaxSettings } from '../merchants/index.js';

/** 10,000 basis points make 100 %. */
const BASIS_POINTS_PER_UNIT = 10_000;

/**
 * Tax in integer cents on `subtotal` at `basisPoints` (825 = 8.25 %), rounded half up: a result of
 * exactly half a cent or more rounds to the next cent (1000 ¢ at 8.25 % = 82.5 ¢ → 83 ¢), less rounds
 * down. Integer arithmetic throughout: 99,999,999 ¢ × 10,000 bp stays far below 2^53.
 */
export function taxOn(subtotal: number, basisPoints: number): number {
  const scaled = subtotal * basisPoints + BASIS_POINTS_PER_UNIT / 2;
  return (scaled - (scaled % BASIS_POINTS_PER_UNIT)) / BASIS_POINTS_PER_UNIT;
}

/** The merchant's rate for `state` (a state the merchant has no rate for is taxed 0) on the subtotal. */
export function taxesFor(settings: TaxSettings, subtotal: number, state: string | null): number {
  if (state === null) return 0;
  const rate = settings.ratesByState[state.trim().toUpperCase()] ?? 0;
  return taxOn(subtotal, rate);
}
