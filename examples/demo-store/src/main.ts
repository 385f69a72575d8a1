/**
 * Runs the demo store alone, against a Wallet Checkout service that is already running:
 * `node examples/demo-store/dist/main.js`. Every setting comes from the environment (see the README).
 */
import { DEFAULT_PORT, type StoreMerchant, startDemoStore } from './server.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is required (see examples/demo-store/README.md)`);
    process.exit(1);
  }
  return value;
}

function merchant(prefix: string): StoreMerchant {
  return {
    merchantId: required(`${prefix}_MERCHANT_ID`),
    apiKey: required(`${prefix}_API_KEY`),
    webhookSecret: required(`${prefix}_WEBHOOK_SECRET`),
  };
}

const port = process.env.DEMO_STORE_PORT ? Number(process.env.DEMO_STORE_PORT) : DEFAULT_PORT;
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`DEMO_STORE_PORT must be a port number (0 to 65535), not "${process.env.DEMO_STORE_PORT}"`);
  process.exit(1);
}

const store = await startDemoStore({
  host: process.env.DEMO_STORE_HOST || 'localhost',
  port,
  serviceUrl: process.env.WALLET_CHECKOUT_URL || 'http://localhost:4000',
  sandboxGatewayUrl: process.env.SANDBOX_GATEWAY_URL || 'http://127.0.0.1:4010',
  merchants: { wallet: merchant('WALLET'), ownProcessor: merchant('OWN_PROCESSOR') },
});
console.log(`Demo store: ${store.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    store.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
