export {
  type OrderConfirmation,
  type Page,
  type PostOptions,
  type ResponseInfo,
  WalletCheckout,
  type WalletCheckoutOptions,
  type WithResponse,
} from './client.js';
export { WalletCheckoutConnectionError, WalletCheckoutError, WebhookVerificationError } from './errors.js';
export type { paths, webhooks } from './openapi.js';
export { checkOrder, type ExpectedOrder, type OrderCheck } from './orders.js';
export type * from './types.js';
export { type IncomingHeaders, type VerifyWebhookInput, verifyWebhook, webhookId } from './webhooks.js';
