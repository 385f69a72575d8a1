/** What Tab can reach in the checkout (disabled and hidden controls are filtered by the caller). */
export const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * Keeps Tab inside the checkout: leaving the frame's last control (or the first, with Shift+Tab) would put
 * focus on the merchant page behind the modal, or nowhere, where Tab then stays stuck. Returns the control
 * to focus instead, or `undefined` to let the browser move focus as usual.
 */
export function wrapTarget<T>(focusables: readonly T[], active: T | null, backwards: boolean): T | undefined {
  if (focusables.length === 0) return undefined;
  const index = active === null ? -1 : focusables.indexOf(active);
  if (index === -1) return backwards ? focusables[focusables.length - 1] : focusables[0];
  if (!backwards && index === focusables.length - 1) return focusables[0];
  if (backwards && index === 0) return focusables[focusables.length - 1];
  return undefined;
}
