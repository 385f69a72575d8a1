/**
 * Callbacks may be async, and a callback that throws is reported in the console without breaking the SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../packages/server/src/test-support/wait.js';
import {
  buttonOptions,
  type Harness,
  openTab,
  payWithCard,
  pressWalletButton,
  startHarness,
  waitForOutcome,
} from './support.js';

describe('async and throwing callbacks in real Chromium', () => {
  let harness: Harness | undefined;
  let asyncUrl = '';
  let throwingUrl = '';
  let misusingUrl = '';
  let failingUrl = '';
  let notAwaitingUrl = '';
  let throwingNothingUrl = '';
  beforeAll(async () => {
    harness = await startHarness();
    // orderDetailsCallback awaits a promise settled by a message round trip (no timers) before creating
    // the order; success awaits before recording.
    asyncUrl = harness.page('/async', {
      before: `
        const later = () => new Promise((resolve) => {
          const channel = new MessageChannel();
          channel.port1.onmessage = () => resolve('ready');
          channel.port2.postMessage(null);
        });`,
      options: buttonOptions({
        orderDetailsCallback: `async (actions) => {
          window.awaited = await later();
          const id = await actions.createOrder({
            orderId: 'shop-async',
            lineItems: [{ SKU: 'TEE', name: 'T-shirt', amount: 2500 }],
            subtotal: 2500,
          });
          window.createdId = id;
        }`,
        success: `async (...args) => {
          await later();
          window.calls.success.push(args);
        }`,
      }),
    });
    // getOrderId throws, success rejects: both reported, the payment and the button carry on.
    throwingUrl = harness.page('/throwing', {
      options: buttonOptions({
        getOrderId: `(...args) => {
          window.calls.getOrderId.push(args);
          throw new Error('merchant bug in getOrderId');
        }`,
        success: `async (...args) => {
          window.calls.success.push(args);
          throw new Error('merchant bug in success');
        }`,
      }),
    });
    // createOrder twice, its refusal caught: the second call is refused, the first's failure reported.
    misusingUrl = harness.page('/misusing', {
      options: buttonOptions({
        orderDetailsCallback: `async (actions) => {
          const first = actions.createOrder({ lineItems: [{ SKU: 'TEE', amount: -5 }] });
          window.second = await actions.createOrder({ lineItems: [{ SKU: 'TEE', amount: 2500 }] }).then(
            () => 'created',
            (error) => error.message,
          );
          await first.catch(() => {});
        }`,
      }),
    });
    // The order is created, then the merchant's own code fails before the callback returns.
    failingUrl = harness.page('/failing-after-order', {
      options: buttonOptions({
        orderDetailsCallback: `async (actions) => {
          await actions.createOrder({ lineItems: [{ SKU: 'TEE', amount: 2500 }] });
          throw new Error('merchant bug after createOrder');
        }`,
      }),
    });
    // The same, the order created without being waited for.
    notAwaitingUrl = harness.page('/not-awaiting', {
      options: buttonOptions({
        orderDetailsCallback: `(actions) => {
          actions.createOrder({ lineItems: [{ SKU: 'TEE', amount: 2500 }] });
          throw new Error('merchant bug after createOrder');
        }`,
      }),
    });
    // A callback that fails with nothing to say.
    throwingNothingUrl = harness.page('/throwing-nothing', {
      options: buttonOptions({ orderDetailsCallback: 'async () => { throw undefined; }' }),
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('an async orderDetailsCallback and an async success: awaited, the payment goes through', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(asyncUrl);
      const orderId = await pressWalletButton(tab.page);
      expect(await tab.page.evaluate('window.awaited')).toBe('ready');
      // createOrder resolved with the service's id, the one getOrderId got.
      expect(await tab.page.evaluate('window.createdId')).toBe(orderId);
      await payWithCard(tab.checkout);
      const calls = await waitForOutcome(tab.page);
      expect(calls.error).toEqual([]);
      expect(calls.success).toHaveLength(1);
      expect(calls.success[0]?.[0]).toBe(orderId);
      const order = await harness.service.call('GET', `/orders/${orderId}`, {
        apiKey: harness.merchant.apiKey,
      });
      expect(order.json).toMatchObject({ status: 'SUCCEEDED', merchantOrderId: 'shop-async' });
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('callbacks that throw are reported in the console; checkout and the button keep working', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page } = tab;
    try {
      await page.goto(throwingUrl);
      const orderId = await pressWalletButton(page);
      await payWithCard(tab.checkout);
      const calls = await waitForOutcome(page);
      expect(calls.success.map((args) => args[0])).toEqual([orderId]);
      expect(calls.error).toEqual([]);
      await expect
        .poll(() => tab.consoleErrors.join('\n'))
        .toMatch(/getOrderId callback threw[\s\S]*success callback threw/);
      // The page's own errors are not uncaught: only the SDK's reports.
      expect(tab.consoleErrors.filter((text) => !text.includes('WalletSDK'))).toEqual([]);

      // The button works again: a second checkout opens.
      await page.locator('iframe[title="Wallet checkout"]').waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Pay with Wallet' }).click();
      await page.waitForFunction('window.calls.getOrderId.length === 2');
      await tab.checkout.getByLabel('Email').waitFor();
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('a refused order caught by orderDetailsCallback is reported as its refusal; a second createOrder is refused', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page } = tab;
    try {
      await page.goto(misusingUrl);
      await page.getByRole('button', { name: 'Pay with Wallet' }).click();
      const calls = await waitForOutcome(page);
      expect(calls.error).toEqual([['', '-1', expect.stringContaining('lineItems[0].amount')]]);
      expect(calls.getOrderId).toEqual([]);
      expect(await page.evaluate('window.second')).toBe(
        'actions.createOrder was already called: one checkout creates one order',
      );
    } finally {
      await tab.close();
    }
  }, 60_000);

  it.each([
    ['awaited', () => failingUrl],
    ['not awaited', () => notAwaitingUrl],
  ])(
    'a callback failing after createOrder (%s): getOrderId, then error with that order, which is abandoned',
    async (_name, url) => {
      if (!harness) throw new Error('setup did not finish');
      const tab = await openTab(harness.browser);
      const { page } = tab;
      try {
        await page.goto(url());
        await page.getByRole('button', { name: 'Pay with Wallet' }).click();
        const calls = await waitForOutcome(page);
        const [[orderId]] = calls.getOrderId as [[string]];
        expect(orderId).toMatch(/^ord_/);
        expect(calls.error).toEqual([[orderId, '-1', 'merchant bug after createOrder']]);
        await until(async () => {
          const order = await harness?.service.call('GET', `/orders/${orderId}`, {
            apiKey: harness.merchant.apiKey,
          });
          return order?.json.status === 'ABANDONED';
        });
      } finally {
        await tab.close();
      }
    },
    60_000,
  );

  it('a callback failing with undefined is a failure too: error, and no checkout opens', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page } = tab;
    try {
      await page.goto(throwingNothingUrl);
      await page.getByRole('button', { name: 'Pay with Wallet' }).click();
      const calls = await waitForOutcome(page);
      expect(calls.error).toEqual([['', '-1', 'undefined']]);
      expect(calls.getOrderId).toEqual([]);
      await page.locator('iframe[title="Wallet checkout"]').waitFor({ state: 'detached' });
    } finally {
      await tab.close();
    }
  }, 60_000);
});
