import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { Signer, USER_AGENT } from './signing.js';

const OLD_SECRET = `whsec_${Buffer.from('old secret of 24 bytes!!').toString('base64')}`;
const NEW_SECRET = `whsec_${Buffer.from('new secret of 24 bytes!!').toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.from('some other secret bytes!').toString('base64')}`;

describe('signing', () => {
  const body = JSON.stringify({ eventName: 'PAYMENT_CREDENTIALS', paymentId: 'p1' });
  const at = new Date();

  it('writes the Standard Webhooks headers, verifiable by the standardwebhooks package', () => {
    const headers = new Signer().headers('msg_1', at, body, [NEW_SECRET]);
    expect(headers).toMatchObject({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
    });
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(new Webhook(NEW_SECRET).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('signs with every active secret during a rotation, so either one verifies', () => {
    const headers = new Signer().headers('msg_2', at, body, [NEW_SECRET, OLD_SECRET]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(NEW_SECRET).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(OLD_SECRET).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(OTHER_SECRET).verify(body, headers)).toThrow(WebhookVerificationError);
  });

  it('does not verify a changed body', () => {
    const headers = new Signer().headers('msg_3', at, body, [NEW_SECRET]);
    expect(() => new Webhook(NEW_SECRET).verify(`${body} `, headers)).toThrow(WebhookVerificationError);
  });

  it('refuses to sign without a secret', () => {
    expect(() => new Signer().headers('msg_4', at, body, [])).toThrow(/no active webhook secret/);
  });
});
