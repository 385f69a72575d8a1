/**
 * The SDK as a bundler takes it from npm (`@wallet-checkout/sdk`, its ESM build), in real Chromium: bundled
 * into a merchant's page with esbuild, both of its forms pay, `WalletSDK.configure(…)` then the
 * interface's `WalletSDK.Button(options)`, and `WalletSDK({ serviceUrl, merchantId }).Button(options)`;
 * `WalletSDK.Button` before `configure` says what to do.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Harness,
  openTab,
  payWithCard,
  pressWalletButton,
  startHarness,
  waitForSuccess,
} from './support.js';

/** The page's bundle: the package as `import` resolves it from this repository's workspaces. */
async function bundleThePackage(): Promise<string> {
  const result = await build({
    stdin: {
      contents: "import { WalletSDK } from '@wallet-checkout/sdk';\nwindow.WalletSDK = WalletSDK;",
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
      loader: 'js',
    },
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2019',
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

describe('the SDK bundled from its npm package in real Chromium', () => {
  let harness: Harness | undefined;
  let bundle = '';

  beforeAll(async () => {
    harness = await startHarness();
    bundle = await bundleThePackage();
  });

  afterAll(async () => {
    await harness?.close();
  });

  const config = () =>
    JSON.stringify({ serviceUrl: harness?.service.url, merchantId: harness?.merchant.merchantId });

  it.each([
    {
      form: 'WalletSDK.configure(…), then WalletSDK.Button(options)',
      path: '/package-configured',
      before: () => `WalletSDK.configure(${config()});`,
    },
    {
      form: 'WalletSDK({ serviceUrl, merchantId }).Button(options)',
      path: '/package-factory',
      before: () => `window.WalletSDK = WalletSDK(${config()});`,
    },
  ])(
    '$form opens the checkout and pays',
    async ({ path, before }) => {
      if (!harness) throw new Error('setup did not finish');
      const url = harness.page(path, { bundle, before: before() });
      const tab = await openTab(harness.browser);
      try {
        await tab.page.goto(url);
        const orderId = await pressWalletButton(tab.page);
        await payWithCard(tab.checkout);
        const success = await waitForSuccess(tab.page);
        expect(success[0]).toBe(orderId);
        expect(tab.consoleErrors).toEqual([]);
      } finally {
        await tab.close();
      }
    },
    60_000,
  );

  it('WalletSDK.Button before WalletSDK.configure throws, naming both ways to configure', async () => {
    if (!harness) throw new Error('setup did not finish');
    const url = harness.page('/package-unconfigured', {
      bundle,
      before: `try { WalletSDK.Button({}); } catch (error) { window.refusal = error.message; }`,
    });
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(url);
      expect(await tab.page.evaluate('window.refusal')).toBe(
        'WalletSDK.Button: call WalletSDK.configure({ serviceUrl, merchantId }) first, or use WalletSDK({ serviceUrl, merchantId }).Button(options)',
      );
    } finally {
      await tab.close();
    }
  });
});
