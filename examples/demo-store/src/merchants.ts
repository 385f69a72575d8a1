/**
 * The two Wallet Checkout merchant accounts the demo store uses, as `wallet-checkout start` creates
 * them (and as you would set them up with `npx wallet-checkout merchant create … / update …`).
 */
import { SHIPPING_METHODS, TAX_RATES_BY_STATE } from './catalog.js';

/** Where Wallet Checkout sends each account's webhooks, on the store's origin. */
export const WEBHOOK_PATHS = {
  wallet: '/webhooks/wallet',
  ownProcessor: '/webhooks/own-processor',
} as const;

export interface DemoMerchantSettings {
  name: string;
  authorizationMode: 'service' | 'merchant';
  credentialTypes: Array<'NETWORK_TOKEN' | 'PAN'>;
  allowedOrigins: string[];
  webhookUrl: string;
  shippingMethods: Array<{ externalId: string; name: string; price: number }>;
  taxSettings: { ratesByState: Record<string, number> };
}

/**
 * `wallet`: Wallet Checkout authorizes (the default flow). `ownProcessor`: the store authorizes with its
 * own processor (authorization mode `merchant`, approved for network tokens and PANs).
 */
export function demoMerchantSettings(storeUrl: string): {
  wallet: DemoMerchantSettings;
  ownProcessor: DemoMerchantSettings;
} {
  const origin = new URL(storeUrl).origin;
  const common = {
    // The SDK and the checkout talk only to pages on these origins.
    allowedOrigins: [origin],
    shippingMethods: SHIPPING_METHODS.map((method) => ({ ...method })),
    taxSettings: { ratesByState: { ...TAX_RATES_BY_STATE } },
    credentialTypes: ['NETWORK_TOKEN', 'PAN'] as Array<'NETWORK_TOKEN' | 'PAN'>,
  };
  return {
    wallet: {
      name: 'Demo Store',
      authorizationMode: 'service',
      webhookUrl: `${origin}${WEBHOOK_PATHS.wallet}`,
      ...common,
    },
    ownProcessor: {
      name: 'Demo Store (own processor)',
      authorizationMode: 'merchant',
      webhookUrl: `${origin}${WEBHOOK_PATHS.ownProcessor}`,
      ...common,
    },
  };
}
