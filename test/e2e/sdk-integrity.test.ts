/**
 * The SDK pinned with Subresource Integrity, in real Chromium: a merchant page loads the version and hash
 * that `GET /sdk/latest.json` names, with `crossorigin="anonymous"`, and the button works; a hash that
 * does not match keeps the script from running at all. A page still pinned to the first release, after
 * the service moved on, pays as it did.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SDK_PACKAGE_DIR } from '../../packages/server/src/api/sdk.js';
import {
  type Harness,
  openTab,
  payWithCard,
  pressWalletButton,
  startHarness,
  waitForSuccess,
} from './support.js';

describe('the SDK pinned with its integrity hash in real Chromium', () => {
  let harness: Harness | undefined;
  let pinned: { src: string; integrity: string };

  beforeAll(async () => {
    harness = await startHarness();
    const manifest = (await harness.service.call('GET', '/sdk/latest.json')).json;
    // PUBLIC_URL is not the test service's address (it listens on a free port): the path is what counts.
    const src = `${harness.service.url}${new URL(manifest.src).pathname}`;
    pinned = { src, integrity: manifest.integrity };
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('runs the pinned SDK whose hash matches, and the button opens the checkout', async () => {
    if (!harness) throw new Error('setup did not finish');
    const url = harness.page('/pinned', { pinned });
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(url);
      expect(await pressWalletButton(tab.page)).toMatch(/^ord_/);
      await tab.checkout.getByLabel('Email').waitFor();
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it('runs the first release, pinned by the hash it was released with, through a payment', async () => {
    if (!harness) throw new Error('setup did not finish');
    const released = JSON.parse(fs.readFileSync(path.join(SDK_PACKAGE_DIR, 'versions.json'), 'utf8'));
    const first = { src: `${harness.service.url}/sdk/0.1.0/wallet-sdk.js`, integrity: released['0.1.0'] };
    expect(first.src).not.toBe(pinned.src);
    const url = harness.page('/pinned-first', { pinned: first });
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(url);
      expect(await tab.page.evaluate('WalletSDK.version')).toBe('0.1.0');
      const orderId = await pressWalletButton(tab.page);
      await payWithCard(tab.checkout);
      const [paidOrderId] = await waitForSuccess(tab.page);
      expect(paidOrderId).toBe(orderId);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('does not run an SDK whose hash does not match', async () => {
    if (!harness) throw new Error('setup did not finish');
    const wrong = `sha384-${Buffer.alloc(48, 1).toString('base64')}`;
    const url = harness.page('/tampered', { pinned: { src: pinned.src, integrity: wrong } });
    const tab = await openTab(harness.browser);
    try {
      const blocked = tab.page.waitForEvent('console', (message) => /integrity/i.test(message.text()));
      await tab.page.goto(url);
      await blocked;
      expect(await tab.page.evaluate('typeof window.WalletSDK')).toBe('undefined');
      expect(await tab.page.getByRole('button', { name: 'Pay with Wallet' }).count()).toBe(0);
    } finally {
      await tab.close();
    }
  });
});
