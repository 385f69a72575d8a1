/**
 * A merchant page on an origin the merchant did not allow: createOrder is refused (a rejected promise),
 * the console says why, `error` is called, and no order is created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buttonOptions,
  CHECKOUT_FRAME,
  type Harness,
  openTab,
  recordedCalls,
  startHarness,
} from './support.js';

describe('a disallowed origin in real Chromium', () => {
  let harness: Harness | undefined;
  let url = '';
  beforeAll(async () => {
    harness = await startHarness();
    const path = harness.page('/elsewhere', {
      options: buttonOptions({
        orderDetailsCallback: `async (actions) => {
          try {
            return await actions.createOrder({
              orderId: 'shop-1001',
              lineItems: [{ SKU: 'TEE', name: 'T-shirt', amount: 2500 }],
              subtotal: 2500,
            });
          } catch (error) {
            window.rejectedWith = String(error && error.message);
            throw error;
          }
        }`,
      }),
    });
    // The same server under another name: http://127.0.0.1:port is not the allowed http://localhost:port.
    url = path.replace('://localhost:', '://127.0.0.1:');
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('createOrder rejects, the console says so, error(...) is called, nothing is created', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page } = tab;
    const responses: Array<{ status: number; body: string }> = [];
    page.on('response', async (response) => {
      if (response.request().method() === 'POST' && response.url().endsWith('/checkout/orders')) {
        responses.push({ status: response.status(), body: await response.text().catch(() => '') });
      }
    });
    try {
      await page.goto(url);
      await page.getByRole('button', { name: 'Pay with Wallet' }).click();
      await page.waitForFunction('window.calls.error.length > 0');
      const calls = await recordedCalls(page);
      expect(calls.success).toEqual([]);
      expect(calls.getOrderId).toEqual([]);
      expect(calls.onClose).toEqual([]);
      expect(calls.error).toHaveLength(1);
      const [orderId, errorCode, errorMessage] = calls.error[0] as [string, string, string];
      expect(orderId).toBe('');
      expect(errorCode).toBe('-1');
      expect(errorMessage).toMatch(/origin/i);
      expect(await page.evaluate('window.rejectedWith')).toMatch(/origin/i);
      expect(tab.consoleErrors.join('\n')).toMatch(/origin/i);
      await page.locator(CHECKOUT_FRAME).waitFor({ state: 'detached' });
      await expect.poll(() => responses.length).toBe(1);
      expect(responses[0]?.status).toBeGreaterThanOrEqual(400);
      expect(responses[0]?.status).toBeLessThan(500);
      expect(responses[0]?.body).not.toMatch(/ord_/);
      await tab.shot('disallowed-origin');
    } finally {
      await tab.close();
    }
  }, 60_000);
});
