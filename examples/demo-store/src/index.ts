/** The demo store, started by `wallet-checkout start` beside the service, or alone with `main.ts`. */
export { PRODUCTS, SHIPPING_METHODS, TAX_RATES_BY_STATE } from './catalog.js';
export { type DemoMerchantSettings, demoMerchantSettings, WEBHOOK_PATHS } from './merchants.js';
export {
  DEFAULT_PORT,
  type DemoStore,
  type DemoStoreOptions,
  type StoreMerchant,
  startDemoStore,
} from './server.js';
