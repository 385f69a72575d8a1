/**
 * The gateway authorizes, and its answers (to the payment and to the retry after the time-out) are lost:
 * the checkout says the bank has not confirmed yet and keeps asking, in real Chromium, with the service,
 * the sandbox gateway behind a proxy that loses answers, and the merchant page. The shopper who waits
 * gets `success` with the gateway's first decision, charged once; one who closes gets `onClose`, and the
 * order settles later all the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayProxy } from '../../packages/server/src/test-support/gateway-proxy.js';
import {
  gatewayBehindProxy,
  type Harness,
  openTab,
  orderStatus,
  payWithCard,
  pressWalletButton,
  recordedCalls,
  startHarness,
  type Tab,
  waitForSuccess,
} from './support.js';

/** 1 s: a lost answer costs two of them before the checkout says so; the gateway answers in a few ms. */
const TIMEOUT_MS = 1_000;
const NOT_CONFIRMED = /has not confirmed the payment yet/;

describe('a payment the gateway gave no decision for, in real Chromium', () => {
  let harness: Harness | undefined;
  let proxy: GatewayProxy | undefined;
  beforeAll(async () => {
    harness = await startHarness();
    proxy = await gatewayBehindProxy(harness, TIMEOUT_MS, 'sk_sandbox_undecided');
  });
  afterAll(async () => {
    await proxy?.close();
    await harness?.close();
  });

  const asksFor = (orderId: string) =>
    proxy?.forwarded.filter((entry) => entry.idempotencyKey === orderId) ?? [];
  const statusOf = (orderId: string) => orderStatus(harness as Harness, orderId);
  /** Pays with 1111 while the gateway's answers are lost, until the checkout says so; the order's id. */
  const payUnconfirmed = async (tab: Tab) => {
    if (!harness || !proxy) throw new Error('setup did not finish');
    await tab.page.goto(harness.shop.url);
    const orderId = await pressWalletButton(tab.page);
    proxy.loseNextAnswers(2);
    await payWithCard(tab.checkout, '1111');
    await tab.checkout.getByRole('status').filter({ hasText: NOT_CONFIRMED }).waitFor();
    return orderId;
  };

  it('says the bank has not confirmed, keeps asking, and reports success with the first decision, charged once', async () => {
    if (!harness || !proxy) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    try {
      const orderId = await payUnconfirmed(tab);
      await tab.shot('payment-not-confirmed-yet');
      expect(await statusOf(orderId)).toBe('PROCESSING');
      expect((await recordedCalls(tab.page)).error).toEqual([]);

      const args = await waitForSuccess(tab.page);
      const transactionDetails = args[6] as { gatewayResponse: unknown };
      const [lost] = asksFor(orderId);
      expect(lost?.delivered).toBe(false);
      expect(transactionDetails.gatewayResponse).toEqual(JSON.parse(lost?.body ?? ''));
      expect(asksFor(orderId).filter((entry) => !entry.replayed)).toHaveLength(1);
      expect(await statusOf(orderId)).toBe('SUCCEEDED');
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('says the shop will be told when the sign-in ends before the bank confirms', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    try {
      const orderId = await payUnconfirmed(tab);
      // The checkout's sign-in ends (they last 30 minutes): its next submit is refused.
      await harness.service.services.db.kysely.deleteFrom('shopper_tokens').execute();
      await tab.checkout.getByText('Payment not confirmed yet').waitFor();
      await tab.shot('payment-not-confirmed-signed-out');
      expect(await statusOf(orderId)).toBe('PROCESSING');
      await tab.checkout.getByRole('button', { name: 'Close' }).click();
      await tab.page.waitForFunction('window.calls.onClose.length === 1');
      const calls = await recordedCalls(tab.page);
      expect([calls.success, calls.error]).toEqual([[], []]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('lets the shopper close meanwhile: onClose, and the order settles without them', async () => {
    if (!harness || !proxy) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    try {
      const orderId = await payUnconfirmed(tab);
      await tab.checkout.getByRole('button', { name: 'Close' }).click();
      await tab.page.waitForFunction('window.calls.onClose.length === 1');
      const calls = await recordedCalls(tab.page);
      expect(calls.success).toEqual([]);
      expect(calls.error).toEqual([]);
      expect(await statusOf(orderId)).toBe('PROCESSING');

      // The sweep of payments left under way, as it runs 10 minutes later.
      await harness.service.services.checkout.settleStalledPayments(Date.now() + 1);
      expect(await statusOf(orderId)).toBe('SUCCEEDED');
      expect(asksFor(orderId).filter((entry) => !entry.replayed)).toHaveLength(1);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
