/** The hosted checkout's use cases; see README.md in this folder. */
export type { EnrolInput, EnrolmentAddress } from './enrolment.js';
export type { PayInput } from './payment.js';
export {
  Checkout,
  type CheckoutDeps,
  type NewWalletCard,
  type OrderSummary,
  type Quote,
  type QuoteInput,
  type WalletView,
} from './service.js';
export type * from './shapes.js';
export { taxesFor, taxOn } from './taxes.js';
