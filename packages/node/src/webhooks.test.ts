/**
 * Webhook verification, on bodies signed here with the `standardwebhooks` package the service signs
 * with (test/node/client.test.ts verifies webhooks the service sent).
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from './errors.js';
import { verifyWebhook, webhookId } from './webhooks.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const body = JSON.stringify({
  eventName: 'WEBHOOK_TEST',
  merchantId: 'mch_1',
  sentAt: '2026-11-27T07:00:00Z',
});

function signed(at = new Date(), payload = body, key = secret): Record<string, string> {
  return {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign('msg_1', at, payload),
  };
}

describe('verifyWebhook', () => {
  it('returns the event of a body signed with the secret, from plain or fetch headers', () => {
    expect(verifyWebhook({ secret, body, headers: signed() })).toEqual(JSON.parse(body));
    const capitalized = Object.fromEntries(
      Object.entries(signed()).map(([name, value]) => [name.replace(/\b\w/g, (c) => c.toUpperCase()), value]),
    );
    expect(Object.keys(capitalized)).toContain('Webhook-Id');
    expect(verifyWebhook({ secret, body, headers: capitalized })).toEqual(JSON.parse(body));
    expect(verifyWebhook({ secret, body: Buffer.from(body), headers: new Headers(signed()) })).toMatchObject({
      eventName: 'WEBHOOK_TEST',
    });
  });

  it('accepts a message signed by the old and the new secret during a rotation', () => {
    const old = `whsec_${randomBytes(24).toString('base64')}`;
    const headers = signed();
    headers['webhook-signature'] =
      `${signed(new Date(), body, old)['webhook-signature']} ${headers['webhook-signature']}`;
    expect(verifyWebhook({ secret, body, headers })).toMatchObject({ eventName: 'WEBHOOK_TEST' });
  });

  it('refuses a changed body, another secret, an old timestamp and a missing header', () => {
    const cases: [string, () => unknown, RegExp][] = [
      [
        'changed body',
        () => verifyWebhook({ secret, body: body.replace('mch_1', 'mch_2'), headers: signed() }),
        /No matching signature/,
      ],
      [
        'another secret',
        () =>
          verifyWebhook({
            secret,
            body,
            headers: signed(new Date(), body, `whsec_${randomBytes(24).toString('base64')}`),
          }),
        /No matching signature/,
      ],
      [
        'old timestamp',
        () => verifyWebhook({ secret, body, headers: signed(new Date(Date.now() - 600_000)) }),
        /too old/,
      ],
      [
        'missing header',
        () => verifyWebhook({ secret, body, headers: { ...signed(), 'webhook-signature': undefined } }),
        /webhook-signature header is missing/,
      ],
    ];
    for (const [name, verify, message] of cases) {
      expect(verify, name).toThrow(WebhookVerificationError);
      expect(verify, name).toThrow(message);
    }
  });

  it('reads the webhook-id that repeats of a message share', () => {
    expect(webhookId(signed())).toBe('msg_1');
    expect(webhookId({ 'webhook-id': ['msg_2', 'msg_3'] })).toBe('msg_2');
    expect(webhookId({})).toBeUndefined();
  });
});
