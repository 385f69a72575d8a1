import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../secret.js';
import { startSmtpServer, type TestSmtpServer } from '../test-support/smtp.js';
import { SmtpSender } from './index.js';

describe('SmtpSender', () => {
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer({ user: 'wallet', password: 'p@ss word' });
  });
  afterAll(() => smtp.close());

  it('delivers a message to a local SMTP server, signing in with the credentials of SMTP_URL', async () => {
    const sender = new SmtpSender({ url: new Secret(smtp.url), from: 'Wallet Checkout <codes@pay.example>' });
    await sender.send({
      to: 'ada@example.com',
      subject: 'Your checkout code',
      text: '123456 is your one-time code.',
    });
    sender.close();
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail).toMatchObject({ from: 'codes@pay.example', to: ['ada@example.com'], user: 'wallet' });
    expect(mail?.raw).toMatch(/^From: Wallet Checkout <codes@pay\.example>\r?$/m);
    expect(mail?.raw).toMatch(/^To: ada@example\.com\r?$/m);
    expect(mail?.raw).toMatch(/^Subject: Your checkout code\r?$/m);
    expect(mail?.raw).toContain('123456 is your one-time code.');
  });

  it('rejects when the server refuses the message', async () => {
    const refusing = await startSmtpServer({ rejectRecipients: true });
    const sender = new SmtpSender({ url: new Secret(refusing.url), from: 'codes@pay.example' });
    await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow(
      /Mailbox unavailable/,
    );
    sender.close();
    await refusing.close();
    expect(refusing.received).toEqual([]);
  });

  it('rejects when the password is wrong', async () => {
    const url = smtp.url.replace('p%40ss%20word', 'wrong');
    const sender = new SmtpSender({ url: new Secret(url), from: 'codes@pay.example' });
    await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow(/Invalid/);
    sender.close();
  });
});
