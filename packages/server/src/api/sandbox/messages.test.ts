import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import { engines } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';
import { startSmtpServer, type TestSmtpServer } from '../../test-support/smtp.js';
import { LOCALHOST_TLS } from '../../test-support/tls.js';

const PRODUCTION = {
  WALLET_ENV: 'production',
  VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  PUBLIC_URL: 'https://pay.example',
};

describe.each(engines())('GET /sandbox/messages on %s', (engine) => {
  describe('in staging', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService(engine);
    });
    afterAll(() => service.close());

    it("shows the test shopper's one-time codes, newest first, and logs them", async () => {
      const { shopperAuth } = service.services;
      await shopperAuth.requestCode('ord_first', TEST_SHOPPER_EMAIL);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await shopperAuth.requestCode('ord_second', TEST_SHOPPER_EMAIL);

      const response = await service.call(
        'GET',
        `/sandbox/messages?to=${encodeURIComponent('Test.Shopper@Example.com')}`,
      );
      expect(response.status).toBe(200);
      const { data } = response.json as {
        data: { to: string; subject: string; text: string; sentAt: string }[];
      };
      expect(data).toHaveLength(2);
      for (const message of data) {
        expect(message).toEqual({
          to: TEST_SHOPPER_EMAIL,
          subject: 'Your checkout code',
          text: expect.stringMatching(/^123456 is your one-time code/),
          sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        });
      }
      expect(Date.parse(data[0]?.sentAt ?? '')).toBeGreaterThan(Date.parse(data[1]?.sentAt ?? ''));
      expect(service.logs.join('')).toContain('123456 is your one-time code');

      // The code read from the mailbox signs the shopper in.
      const { shopperToken } = await shopperAuth.verifyCode('ord_second', TEST_SHOPPER_EMAIL, '123456');
      expect((await shopperAuth.authenticate(shopperToken))?.orderId).toBe('ord_second');
    });

    it("keeps a new shopper's code for enrolment, and no one else's messages", async () => {
      const email = 'someone.new@example.com';
      await service.services.shopperAuth.requestCode('ord_new', email, { enrol: true });
      const mine = await service.call('GET', `/sandbox/messages?to=${email}`);
      expect(mine.json.data).toHaveLength(1);
      expect(mine.json.data[0].text).toMatch(/^\d{6} is your one-time code/);
      const nobody = await service.call('GET', '/sandbox/messages?to=nobody@example.com');
      expect([nobody.status, nobody.json]).toEqual([200, { data: [] }]);
    });

    it('answers for any address when nothing is e-mailed', async () => {
      const response = await service.call('GET', '/sandbox/messages?to=kate@gmail.com');
      expect([response.status, response.json]).toEqual([200, { data: [] }]);
    });

    it('asks for the recipient', async () => {
      const response = await service.call('GET', '/sandbox/messages');
      expect(response.status).toBe(400);
      expect(response.json.errorCode).toBe('VALIDATION_ERROR');
      expect(response.json.errorMessage).toMatch(/to/);
    });
  });

  describe('in staging with SMTP_URL', () => {
    let accepting: TestSmtpServer;
    let refusing: TestSmtpServer;
    beforeAll(async () => {
      [accepting, refusing] = await Promise.all([
        startSmtpServer(),
        startSmtpServer({ rejectRecipients: true }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([accepting.close(), refusing.close()]);
    });

    const mailboxOf = async (service: TestService, email: string) =>
      (await service.call('GET', `/sandbox/messages?to=${email}`)).json.data as { text: string }[];

    /** Runs `test` against a staging service that sends through `smtp`, and closes it. */
    const withSmtp = async (smtp: TestSmtpServer, test: (service: TestService) => Promise<void>) => {
      const service = await startTestService(engine, { SMTP_URL: smtp.url, SMTP_FROM: 'codes@pay.example' });
      try {
        await test(service);
      } finally {
        await service.close();
      }
    };

    it('e-mails each message, and keeps it once the server took it', async () => {
      await withSmtp(accepting, async (service) => {
        const email = 'smtp.staging@example.com';
        await service.services.shopperAuth.requestCode('ord_smtp', email, { enrol: true });
        expect(accepting.received.map((mail) => mail.to)).toEqual([[email]]);
        const [kept] = await mailboxOf(service, email);
        expect(accepting.received[0]?.raw).toContain(kept?.text.slice(0, 30));
        expect(service.logs.join('')).toContain('staging: e-mailed, and kept for GET /sandbox/messages');
      });
    });

    it('serves only test addresses, since the server may reach real shoppers', async () => {
      await withSmtp(accepting, async (service) => {
        const real = await service.call('GET', '/sandbox/messages?to=kate@gmail.com');
        expect([real.status, real.json.errorCode, real.json.errorMessage]).toEqual([
          400,
          'VALIDATION_ERROR',
          expect.stringMatching(/^to: with SMTP_URL set, staging may hold real shoppers/),
        ]);
        expect((await service.call('GET', '/sandbox/messages?to=someone@shop.test')).status).toBe(200);
        const { apiKey } = await service.merchant();
        const anyone = await service.call('POST', '/sandbox/sessions', {
          apiKey,
          body: { email: 'kate@gmail.com' },
        });
        expect([anyone.status, anyone.json.errorMessage]).toEqual([
          400,
          expect.stringMatching(/^email: with SMTP_URL set/),
        ]);
        expect((await service.call('POST', '/sandbox/sessions', { apiKey, body: {} })).status).toBe(200);
      });
    });

    it('keeps nothing of a message the server refused: no code the shopper was told failed', async () => {
      await withSmtp(refusing, async (service) => {
        const email = 'smtp.refused@example.com';
        const failed = await service.services.shopperAuth
          .requestCode('ord_refused', email, { enrol: true })
          .then(
            () => undefined,
            (error: { errorCode?: string }) => error.errorCode,
          );
        expect(failed).toBe('MESSAGE_NOT_SENT');
        expect(await mailboxOf(service, email)).toEqual([]);
        // The test shopper's messages never go to the server: its address takes no mail.
        await service.services.shopperAuth.requestCode('ord_test_shopper', TEST_SHOPPER_EMAIL);
        const [code] = await mailboxOf(service, TEST_SHOPPER_EMAIL);
        expect(code?.text).toMatch(/^123456 is your one-time code/);
      });
    });

    it('answers a code the server refused with 503 MESSAGE_NOT_SENT and when to ask again', async () => {
      await withSmtp(refusing, async (service) => {
        const origin = 'https://shop.example';
        const { merchantId } = await service.merchant({ allowedOrigins: [origin] });
        const { email } = await service.services.wallet.createShopper({
          email: 'smtp.refused.http@example.com',
          firstName: 'Ada',
          lastName: 'Lovelace',
        });
        const order = await service.call('POST', '/checkout/orders', {
          body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
          headers: { origin },
        });
        const sent = await service.call('POST', `/checkout/api/orders/${order.json.orderId}/otp`, {
          body: { email },
        });
        expect([sent.status, sent.headers['retry-after'], sent.json.errorCode]).toEqual([
          503,
          '5',
          'MESSAGE_NOT_SENT',
        ]);
        // Logged with the answer's request id and the server's refusal, as every 5xx is.
        const logged = service.logs
          .flatMap((chunk) => chunk.split('\n'))
          .filter((line) => line.includes('answered 503 MESSAGE_NOT_SENT'))
          .map((line) => JSON.parse(line));
        expect(logged).toEqual([
          expect.objectContaining({
            level: 40,
            requestId: sent.headers['request-id'],
            errorCode: 'MESSAGE_NOT_SENT',
            err: expect.objectContaining({ message: expect.stringMatching(/Mailbox unavailable/) }),
          }),
        ]);
      });
    });
  });

  describe('in production', () => {
    let smtp: TestSmtpServer;
    let service: TestService;
    beforeAll(async () => {
      // Production signs in and sends only after STARTTLS.
      smtp = await startSmtpServer({ tls: LOCALHOST_TLS });
      service = await startTestService(engine, {
        ...PRODUCTION,
        SMTP_URL: smtp.url,
        SMTP_FROM: 'Wallet Checkout <codes@pay.example>',
      });
    });
    afterAll(async () => {
      await service.close();
      await smtp.close();
    });

    it('does not exist', async () => {
      const response = await service.call('GET', `/sandbox/messages?to=${TEST_SHOPPER_EMAIL}`);
      expect(response.status).toBe(404);
      expect(response.json.errorCode).toBe('NOT_FOUND');
    });

    it('e-mails codes by SMTP and never logs them', async () => {
      const { wallet, shopperAuth } = service.services;
      const shopper = await wallet.createShopper({
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'L',
      });
      expect(await shopperAuth.requestCode('ord_1', shopper.email)).toEqual({
        status: 'sent',
        destination: 'a***a@example.com',
      });
      expect(smtp.received).toHaveLength(1);
      expect(smtp.received[0]?.secure).toBe(true);
      const code = /(\d{6}) is your one-time code/.exec(smtp.received[0]?.raw ?? '')?.[1];
      expect(code).toMatch(/^\d{6}$/);
      // Without the lines' times and process id, whose digits could hold six-digit codes by chance.
      expect(service.logs.join('').replace(/"(time|pid)":\d+/g, '')).not.toContain(code);
      const { shopperToken } = await shopperAuth.verifyCode('ord_1', shopper.email, code as string);
      expect(await shopperAuth.authenticate(shopperToken)).toEqual({
        shopperId: shopper.id,
        orderId: 'ord_1',
        proof: 'code',
      });
    });
  });

  describe('in production without SMTP_URL', () => {
    let service: TestService;
    beforeAll(async () => {
      service = await startTestService(engine, PRODUCTION);
    });
    afterAll(() => service.close());

    it('warns at start and refuses to send codes', async () => {
      expect(service.logs.join('')).toContain('SMTP_URL is not set');
      const { wallet, shopperAuth } = service.services;
      const shopper = await wallet.createShopper({
        email: 'bob@example.com',
        firstName: 'Bob',
        lastName: 'B',
      });
      await expect(shopperAuth.requestCode('ord_1', shopper.email)).rejects.toMatchObject({
        errorCode: 'MESSAGE_NOT_SENT',
      });
    });
  });
});
