import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../secret.js';
import { startTestService } from '../test-support/service.js';
import { startSmtpServer, type TestSmtpServer } from '../test-support/smtp.js';
import { SELF_SIGNED_TLS } from '../test-support/tls.js';
import { until } from '../test-support/wait.js';
import { SmtpSender } from './index.js';

describe('SmtpSender', () => {
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer({ user: 'wallet', password: 'p@ss word' });
  });
  afterAll(() => smtp.close());

  it('delivers a message to a local SMTP server, signing in with the credentials of SMTP_URL', async () => {
    const sender = new SmtpSender({
      url: new Secret(smtp.url),
      from: 'Wallet Checkout <codes@pay.example>',
      requireTls: false,
    });
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
    const sender = new SmtpSender({
      url: new Secret(refusing.url),
      from: 'codes@pay.example',
      requireTls: false,
    });
    await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow(
      /Mailbox unavailable/,
    );
    sender.close();
    await refusing.close();
    expect(refusing.received).toEqual([]);
  });

  it("gives up on a server that never greets after its time-out, not nodemailer's 30 s", async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const sender = new SmtpSender({
      url: new Secret(`smtp://127.0.0.1:${port}`),
      from: 'codes@pay.example',
      requireTls: false,
      timeouts: { connectMs: 500, idleMs: 1_000 },
    });
    try {
      await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow(
        /Greeting never received/,
      );
    } finally {
      sender.close();
      silent.close();
    }
  }, 10_000);

  it('rejects when the password is wrong', async () => {
    const url = smtp.url.replace('p%40ss%20word', 'wrong');
    const sender = new SmtpSender({ url: new Secret(url), from: 'codes@pay.example', requireTls: false });
    await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow(/Invalid/);
    sender.close();
  });

  it('neither signs in nor sends in clear when TLS is required and the server offers no STARTTLS', async () => {
    const plain = await startSmtpServer({ user: 'wallet', password: 'pw' });
    const sender = new SmtpSender({
      url: new Secret(plain.url),
      from: 'codes@pay.example',
      requireTls: true,
    });
    await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow(/STARTTLS/);
    sender.close();
    await plain.close();
    expect(plain.signIns).toEqual([]);
    expect(plain.received).toEqual([]);
  });

  it('refuses a STARTTLS server whose certificate nobody trusts, before the sign-in', async () => {
    const untrusted = await startSmtpServer({ user: 'wallet', password: 'pw', tls: SELF_SIGNED_TLS });
    for (const requireTls of [true, false]) {
      const sender = new SmtpSender({
        url: new Secret(untrusted.url),
        from: 'codes@pay.example',
        requireTls,
      });
      await expect(sender.send({ to: 'ada@example.com', subject: 's', text: 't' })).rejects.toThrow(
        /self-signed certificate/,
      );
      sender.close();
    }
    await untrusted.close();
    expect(untrusted.signIns).toEqual([]);
    expect(untrusted.received).toEqual([]);
  });
});

describe('the SMTP check when the service starts', () => {
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer({ user: 'wallet', password: 'p@ss word' });
  });
  afterAll(() => smtp.close());

  /** The service's log lines about its SMTP server, once one has been written. */
  const smtpLines = async (smtpUrl: string) => {
    const service = await startTestService('sqlite', { SMTP_URL: smtpUrl, SMTP_FROM: 'codes@pay.example' });
    try {
      const lines = await until(async () => {
        const found = service.logs
          .flatMap((chunk) => chunk.split('\n'))
          .filter((line) => line.includes('"smtp":'))
          .map((line) => JSON.parse(line) as { level: number; msg: string; smtp: string; err?: unknown });
        return found.length > 0 && found;
      });
      return { lines, logs: service.logs.join('') };
    } finally {
      await service.close();
    }
  };

  it('logs that the server accepted the sign-in, sending nothing', async () => {
    const { lines } = await smtpLines(smtp.url);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'the SMTP server accepted the sign-in',
        smtp: expect.stringMatching(/^smtp:\/\/127\.0\.0\.1:\d+$/),
      }),
    ]);
    expect(smtp.received).toEqual([]);
  });

  it('warns, without the password, when the server refuses the sign-in', async () => {
    const { lines, logs } = await smtpLines(smtp.url.replace('p%40ss%20word', 'Wr0ng-pa55'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, smtp: expect.stringMatching(/^smtp:\/\/127\.0\.0\.1:\d+$/) });
    expect(lines[0]?.msg).toContain('shoppers get no one-time codes by e-mail until SMTP_URL is mended');
    expect(JSON.stringify(lines[0]?.err)).toContain('Invalid login');
    expect(logs).not.toContain('Wr0ng-pa55');
  });
});
