import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { visaNumber } from '../test-support/cards.js';
import { databaseLine, expectIsoTimes, json, runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import {
  credentialsBody,
  signInTestShopper,
  startTestService,
  type TestService,
} from '../test-support/service.js';

const SHOP = 'https://shop.example';
const PAN = visaNumber(700);

describe.each(engines())('wallet-checkout shopper … on %s', (engine) => {
  let database: TestDatabase;
  let service: TestService;
  let env: Record<string, string>;
  const cli = (...argv: string[]) => runCli(env, argv);

  beforeAll(async () => {
    database = await testDatabase(engine);
    service = await startTestService(engine, {}, { database });
    env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  it('shows what the wallet holds, then erases it: signed out, sessions ended, numbers erased within the hour', async () => {
    // Nothing listens at its webhook URL, nor at the sandbox gateway's: what was sent is what counts.
    const { merchantId, apiKey } = await service.merchant({
      name: 'Sent Data Shop',
      allowedOrigins: [SHOP],
      webhookUrl: 'http://127.0.0.1:9/webhooks',
    });
    const { orderId, headers } = await signInTestShopper(service, merchantId, SHOP);
    const wallet = (await service.call('GET', '/checkout/api/wallet', { headers })).json;
    const added = await service.call('POST', '/checkout/api/wallet/cards', {
      headers,
      body: {
        number: PAN,
        expMonth: 12,
        expYear: new Date().getUTCFullYear() + 2,
        nameOnCard: 'Taylor Shopper',
        billingAddressId: wallet.addresses[0].addressId,
      },
    });
    expect(added.status).toBe(201);
    const session = await service.session(apiKey);
    const acknowledged = await service.call('POST', '/payments/credentials', {
      apiKey,
      body: credentialsBody(session, { paymentId: added.json.paymentId }),
    });
    expect(acknowledged.status).toBe(200);
    const paid = await service.call('POST', `/checkout/api/orders/${orderId}/pay`, {
      headers,
      body: { paymentId: added.json.paymentId, cvv: '123' },
    });
    expect(paid.json.outcome).toBe('error');
    const removed = wallet.cards.find((card: { isDefault: boolean }) => !card.isDefault);
    await service.call('DELETE', `/checkout/api/wallet/cards/${removed.paymentId}`, { headers });
    const before = await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL);
    const remembered = await service.services.shopperAuth.rememberDevice(before?.id as string, {
      orderId: 'ord_test',
      merchantId,
    });
    if (!remembered) throw new Error('the test service remembers no device');
    const { deviceToken } = remembered;
    // An e-mail the mail server refused once, waiting for its retry.
    const waiting = {
      id: 'ntc_waiting',
      shopper_id: before?.id as string,
      email: TEST_SHOPPER_EMAIL,
      kind: 'device_remembered' as const,
      details: JSON.stringify({
        shopName: 'Sent Data Shop',
        rememberedAt: Date.now(),
        expiresAt: Date.now() + 1,
      }),
      created_at: Date.UTC(2030, 0, 1),
      attempts: 1,
      next_attempt_at: Date.UTC(2099, 0, 1),
      last_error: '450 Mailbox busy',
    };
    await service.services.db.kysely.insertInto('shopper_notices').values(waiting).execute();

    const shown = await cli('shopper', 'show', TEST_SHOPPER_EMAIL);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`email:    ${TEST_SHOPPER_EMAIL}`);
    expect(shown.stdout).toContain('visa ending');
    expect(shown.stdout).toContain('sessions: 1 live');
    expect(shown.stdout).toMatch(/^devices: {2}1 remembered; since \S+Z, last used never$/m);
    expect(shown.stdout).toContain(
      'e-mails:  1 waiting to be sent; device_remembered of 2030-01-01T00:00:00.000Z, 1 attempt(s), next 2099-01-01T00:00:00.000Z (last: 450 Mailbox busy)',
    );
    expect(shown.stdout).toMatch(
      new RegExp(
        `${removed.cardBrand} ending ${removed.last4CardNumber} .* removed \\S+; number to be erased`,
      ),
    );
    const holdings = json(await cli('shopper', 'show', TEST_SHOPPER_EMAIL, '--json')) as {
      shopperId: string;
      addresses: unknown[];
      cards: { paymentId: string; last4: string; removedAt: string | null }[];
      merchants: unknown[];
    };
    expectIsoTimes(holdings);
    expect(holdings.cards.map((card) => card.paymentId)).toContain(added.json.paymentId);
    expect(holdings.merchants).toEqual([
      { merchantId, name: 'Sent Data Shop', credentialsRequests: 1, orders: { FAILED: 1 } },
    ]);
    expect(shown.stdout).toContain(
      `Sent Data Shop (${merchantId}): 1 credentials webhooks; orders: 1 FAILED`,
    );
    expect(holdings.cards.filter((card) => card.removedAt !== null).map((card) => card.paymentId)).toEqual([
      removed.paymentId,
    ]);
    // What the shopper did in the checkout, from the audit trail: all of it by the subject, the latest shown.
    const actions = ['wallet.card_added', 'wallet.card_removed', 'device.remembered'];
    expect(shown.stdout).toMatch(/^Activity \(the latest \d+, oldest first\):$/m);
    for (const action of actions)
      expect(shown.stdout).toMatch(new RegExp(`^  \\S+Z  ${action}  shopper:`, 'm'));
    const activity = (holdings as unknown as { activity: { action: string }[] }).activity;
    expect(activity.map((event) => event.action)).toEqual([...actions, 'shopper.viewed', 'shopper.viewed']);
    const bySubject = json(await cli('audit', 'list', '--subject', holdings.shopperId, '--json')) as {
      events: { action: string; subject: string }[];
    };
    expect(bySubject.events.map((event) => event.action)).toEqual(activity.map((event) => event.action));
    expect(new Set(bySubject.events.map((event) => event.subject))).toEqual(new Set([holdings.shopperId]));

    const unconfirmed = await cli('shopper', 'erase', TEST_SHOPPER_EMAIL);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('add --yes to confirm');

    const erased = json(await cli('shopper', 'erase', TEST_SHOPPER_EMAIL, '--yes', '--json'));
    expect(erased).toEqual({
      shopperId: holdings.shopperId,
      cardsRemoved: holdings.cards.length - 1,
      addressesEmptied: holdings.addresses.length,
      sessionsEnded: 1,
      signInsDeleted: expect.any(Number),
    });
    // No card number, name or street was printed along the way.
    for (const outcome of [shown, unconfirmed]) expect(outcome.stdout + outcome.stderr).not.toContain(PAN);

    // The open checkout is signed out, the session refused, and the email is unknown: free to enrol again.
    const signedOut = await service.call('GET', '/checkout/api/wallet', { headers });
    expect([signedOut.status, signedOut.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
    expect(await service.services.shopperAuth.recognizeDevice(deviceToken, merchantId)).toBeUndefined();
    const notices = service.services.db.kysely.selectFrom('shopper_notices').select('id');
    expect(await notices.where('id', '=', waiting.id).execute()).toEqual([]);
    const refused = await service.call('POST', '/payments/credentials', {
      apiKey,
      body: credentialsBody(session, { paymentId: added.json.paymentId }),
    });
    expect([refused.status, refused.json.errorCode]).toEqual([422, 'SESSION_EXPIRED']);
    const next = await service.call('POST', '/checkout/orders', {
      body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
      headers: { origin: SHOP },
    });
    const asked = await service.call('POST', `/checkout/api/orders/${next.json.orderId}/otp`, {
      body: { email: TEST_SHOPPER_EMAIL },
    });
    expect(asked.json.status).toBe('enrol');
    const gone = await cli('shopper', 'show', TEST_SHOPPER_EMAIL);
    const named = databaseLine(env.DATABASE_URL as string);
    expect([gone.code, gone.stderr]).toEqual([1, `${named}error: no shopper has that email\n`]);

    // What stays is emptied: the rows, which orders and requests refer to, and the cards' brands and last
    // four digits; each card's number is due to be erased.
    const { kysely } = service.services.db;
    const shopper = await kysely
      .selectFrom('shoppers')
      .selectAll()
      .where('id', '=', holdings.shopperId)
      .executeTakeFirstOrThrow();
    expect(shopper).toMatchObject({
      email: `erased:${holdings.shopperId}`,
      first_name: '',
      last_name: '',
      phone: null,
    });
    const addresses = await kysely
      .selectFrom('addresses')
      .select(['first_name', 'address1', 'city', 'zip', 'phone_number'])
      .where('shopper_id', '=', holdings.shopperId)
      .execute();
    expect(addresses).toEqual(
      holdings.addresses.map(() => ({ first_name: '', address1: '', city: '', zip: '', phone_number: null })),
    );
    const cards = await kysely
      .selectFrom('cards')
      .select(['vault_id', 'name_on_card', 'removed_at', 'last4'])
      .where('shopper_id', '=', holdings.shopperId)
      .execute();
    expect(cards.every((card) => card.name_on_card === '' && card.removed_at !== null)).toBe(true);
    expect(cards.map((card) => card.last4).sort()).toEqual(holdings.cards.map((card) => card.last4).sort());
    const due = await kysely.selectFrom('vault_erasures').select('vault_id').execute();
    expect(due.map((entry) => entry.vault_id)).toEqual(
      expect.arrayContaining(cards.map((card) => card.vault_id)),
    );

    // The audit trail names the shopper by id only: the email is what was erased.
    const audited = await kysely
      .selectFrom('audit_events')
      .select(['actor', 'action', 'subject', 'details'])
      .where('action', 'in', ['shopper.viewed', 'shopper.erased'])
      .orderBy('seq')
      .execute();
    // Shown twice, erased; the show after it found no one, and recorded nothing.
    expect(audited.map(({ action, subject }) => [action, subject])).toEqual([
      ['shopper.viewed', holdings.shopperId],
      ['shopper.viewed', holdings.shopperId],
      ['shopper.erased', holdings.shopperId],
    ]);
    expect(audited.every((event) => event.actor.startsWith('operator:'))).toBe(true);
    expect(JSON.parse(audited.at(-1)?.details ?? '{}')).toEqual({
      cardsRemoved: holdings.cards.length - 1,
      addressesEmptied: holdings.addresses.length,
      sessionsEnded: 1,
    });
    expect(JSON.stringify(audited)).not.toContain(TEST_SHOPPER_EMAIL);

    // The id, which the audit trail and the log name, still finds the erased shopper: to replay the
    // erasure after a restore, or to finish one cut short.
    const byId = await cli('shopper', 'show', holdings.shopperId);
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain(`email:    erased:${holdings.shopperId}\n`);
    expect(json(await cli('shopper', 'erase', holdings.shopperId, '--yes', '--json'))).toEqual({
      shopperId: holdings.shopperId,
      alreadyErased: true,
    });
    const unknown = await cli('shopper', 'show', 'shp_0000000000000000000000');
    expect([unknown.code, unknown.stderr]).toEqual([1, `${named}error: no shopper has that id\n`]);
  });

  it('answers an unknown email with SHOPPER_NOT_FOUND, exit code 1', async () => {
    const outcome = await cli('shopper', 'erase', 'nobody@example.com', '--yes', '--json');
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe(
      `${databaseLine(env.DATABASE_URL as string)}{"error": {"code": "SHOPPER_NOT_FOUND", "message": "no shopper has that email"}}\n`,
    );
  });
});
