/**
 * The SDK pinned with Subresource Integrity, in real Chromium: a merchant page loads the version and hash
 * that `GET /sdk/latest.json` names, with `crossorigin="anonymous"`, and the button works; a hash that
 * does not match keeps the script from running at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, openTab, pressWalletButton, startHarness } from './support.js';

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
