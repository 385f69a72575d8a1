import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../audit/index.js';
import { TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import { hashToken } from '../../shopper-auth/codes.js';
import { TEST_SHOPPER_CODE } from '../../shopper-auth/index.js';
import { TEST_ACTOR } from '../../test-support/actor.js';
import { engines, testDatabase } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';

const SHOP = 'https://shop.example';
const DAY_MS = 24 * 60 * 60_000;

describe.each(engines())('checkout page API: "Remember me on this device" on %s', (engine) => {
  let service: TestService;
  let merchantId: string;

  beforeAll(async () => {
    service = await startTestService(engine);
    ({ merchantId } = await service.merchant({ allowedOrigins: [SHOP] }));
  });
  afterAll(() => service?.close());

  const newOrder = async (at = merchantId): Promise<string> => {
    const created = await service.call('POST', '/checkout/orders', {
      body: { merchantId: at, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
      headers: { origin: SHOP },
    });
    return created.json.orderId;
  };

  /** Signs the test shopper in to a new order with its code; `rememberDevice` as given. */
  const signIn = async (rememberDevice?: boolean, at = merchantId) => {
    const orderId = await newOrder(at);
    const email = TEST_SHOPPER_EMAIL;
    await service.call('POST', `/checkout/api/orders/${orderId}/otp`, { body: { email } });
    const verified = await service.call('POST', `/checkout/api/orders/${orderId}/otp/verify`, {
      body: { email, code: TEST_SHOPPER_CODE, ...(rememberDevice === undefined ? {} : { rememberDevice }) },
    });
    expect(verified.status).toBe(200);
    return verified.json;
  };

  const resume = async (deviceToken: string, email?: string, at = merchantId) => {
    const orderId = await newOrder(at);
    const response = await service.call('POST', `/checkout/api/orders/${orderId}/resume`, {
      body: { deviceToken, ...(email === undefined ? {} : { email }) },
    });
    return { orderId, ...response };
  };

  const devices = () => service.services.db.kysely.selectFrom('remembered_devices').selectAll().execute();

  it('gives a device token only when asked, kept as a hash, good for 30 days', async () => {
    const summary = await service.call('GET', `/checkout/api/orders/${await newOrder()}`);
    expect(summary.json.rememberDeviceDays).toBe(30);
    for (const answer of [await signIn(), await signIn(false)]) {
      expect(Object.keys(answer).sort()).toEqual(['expiresAt', 'shopperToken']);
    }
    const before = Date.now();
    const answer = await signIn(true);
    expect(answer.deviceToken).toMatch(/^[\w-]{43}$/);
    const expiresAt = Date.parse(answer.deviceExpiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 30 * DAY_MS);
    const rows = await devices();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(answer.deviceToken);
  });

  it('signs the remembered shopper in to another order without a code, and records when', async () => {
    const { deviceToken, deviceExpiresAt } = await signIn(true);
    const resumed = await resume(deviceToken);
    expect(resumed.status).toBe(200);
    expect(Object.keys(resumed.json).sort()).toEqual(['deviceExpiresAt', 'expiresAt', 'shopperToken']);
    // Until when the device remembers the shopper: as when it was remembered, not moved by its use.
    expect(resumed.json.deviceExpiresAt).toBe(deviceExpiresAt);
    const headers = { authorization: `Bearer ${resumed.json.shopperToken}` };
    const wallet = await service.call('GET', '/checkout/api/wallet', { headers });
    expect([wallet.status, wallet.json.email]).toEqual([200, TEST_SHOPPER_EMAIL]);
    // Bound to that order, as a token from a code is.
    const quote = await service.call('POST', `/checkout/api/orders/${await newOrder()}/quote`, {
      headers,
      body: { paymentId: wallet.json.cards[0].paymentId },
    });
    expect([quote.status, quote.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
    const used = (await devices()).filter((row) => row.last_used_at !== null);
    expect(used.length).toBeGreaterThan(0);
    // The same email, however it is written, is the same shopper.
    expect((await resume(deviceToken, TEST_SHOPPER_EMAIL.toUpperCase())).status).toBe(200);
  });

  it('forgets a device that remembers another shopper than the email given', async () => {
    const { deviceToken } = await signIn(true);
    const other = await resume(deviceToken, 'someone.else@example.com');
    expect([other.status, other.json.errorCode]).toEqual([401, 'DEVICE_NOT_RECOGNIZED']);
    expect(other.json.errorMessage).toContain('remembers another shopper');
    const after = await resume(deviceToken);
    expect([after.status, after.json.errorCode]).toEqual([401, 'DEVICE_NOT_RECOGNIZED']);
  });

  it('refuses an unknown or expired device token, and forgets one signed out on', async () => {
    const unknown = await resume('no-such-device');
    expect([unknown.status, unknown.json.errorCode]).toEqual([401, 'DEVICE_NOT_RECOGNIZED']);
    expect(unknown.json.errorMessage).toBe(
      'This device is not remembered at this shop (any more); sign in with a one-time code.',
    );

    const expiring = await signIn(true);
    await service.services.db.kysely
      .updateTable('remembered_devices')
      .set({ expires_at: Date.now() - 1 })
      .where('created_at', '>=', Date.parse(expiring.deviceExpiresAt) - 30 * DAY_MS)
      .execute();
    expect((await resume(expiring.deviceToken)).status).toBe(401);

    const signedIn = await signIn(true);
    const out = await service.call('POST', '/checkout/api/sign-out', {
      headers: { authorization: `Bearer ${signedIn.shopperToken}` },
      body: { deviceToken: signedIn.deviceToken },
    });
    expect([out.status, out.json]).toEqual([200, { signedOut: true }]);
    expect((await resume(signedIn.deviceToken)).status).toBe(401);
  });

  it('signs in only at the shop that remembered it, where it still works after another refused it', async () => {
    const other = (await service.merchant({ allowedOrigins: [SHOP] })).merchantId;
    const { deviceToken } = await signIn(true);
    const row = (await devices()).find((device) => device.token_hash === hashToken(deviceToken));
    expect(row?.merchant_id).toBe(merchantId);
    const elsewhere = await resume(deviceToken, undefined, other);
    expect([elsewhere.status, elsewhere.json.errorCode]).toEqual([401, 'DEVICE_NOT_RECOGNIZED']);
    expect(elsewhere.json.errorMessage).toBe(
      'This device is not remembered at this shop (any more); sign in with a one-time code.',
    );
    expect((await resume(deviceToken)).status).toBe(200);
    // "Not you?" at the other shop, whose page on the same site may hold this token, leaves it alone.
    const there = await signIn(undefined, other);
    await service.call('POST', '/checkout/api/sign-out', {
      headers: { authorization: `Bearer ${there.shopperToken}` },
      body: { deviceToken },
    });
    expect((await resume(deviceToken)).status).toBe(200);

    // Remembered before devices were bound to a shop (migration 022): it signs in at any, until it expires.
    await service.services.db.kysely
      .updateTable('remembered_devices')
      .set({ merchant_id: null })
      .where('token_hash', '=', row?.token_hash as string)
      .execute();
    expect((await resume(deviceToken, undefined, other)).status).toBe(200);
  });

  it('names the field and the rule of a bad request', async () => {
    const orderId = await newOrder();
    const cases: [string, unknown, string][] = [
      [`/checkout/api/orders/${orderId}/resume`, {}, 'deviceToken'],
      [`/checkout/api/orders/${orderId}/resume`, { deviceToken: 'x'.repeat(201) }, 'deviceToken'],
      [`/checkout/api/orders/${orderId}/resume`, { deviceToken: 'abc', email: 'nope' }, 'email'],
      [
        `/checkout/api/orders/${orderId}/otp/verify`,
        { email: TEST_SHOPPER_EMAIL, code: TEST_SHOPPER_CODE, rememberDevice: 'yes' },
        'rememberDevice',
      ],
    ];
    for (const [url, body, field] of cases) {
      const response = await service.call('POST', url, { body });
      expect([response.status, response.json.errorCode], url).toEqual([400, 'VALIDATION_ERROR']);
      expect(response.json.errorMessage).toContain(field);
    }
    const signedIn = await signIn();
    const extra = await service.call('POST', '/checkout/api/sign-out', {
      headers: { authorization: `Bearer ${signedIn.shopperToken}` },
      body: { device: 'x' },
    });
    expect([extra.status, extra.json.errorCode]).toEqual([400, 'VALIDATION_ERROR']);
    const missing = await service.call('POST', `/checkout/api/orders/ord_missing/resume`, {
      body: { deviceToken: 'abc' },
    });
    expect([missing.status, missing.json.errorCode]).toEqual([404, 'ORDER_NOT_FOUND']);
  });

  it('offers nothing at a merchant that turned it off, where devices remembered before stop working', async () => {
    const { deviceToken } = await signIn(true);
    const { merchants } = service.services;
    await merchants.update(merchantId, { rememberDevices: false }, TEST_ACTOR);
    try {
      const summary = await service.call('GET', `/checkout/api/orders/${await newOrder()}`);
      expect(summary.json.rememberDeviceDays).toBeNull();
      const count = (await devices()).length;
      expect(Object.keys(await signIn(true)).sort()).toEqual(['expiresAt', 'shopperToken']);
      expect(await devices()).toHaveLength(count);
      const refused = await resume(deviceToken);
      expect([refused.status, refused.json.errorCode]).toEqual([401, 'DEVICE_NOT_RECOGNIZED']);
      expect(refused.json.errorMessage).toMatch(/one-time code at every checkout/);
    } finally {
      await merchants.update(merchantId, { rememberDevices: true }, TEST_ACTOR);
    }
    expect((await resume(deviceToken)).status).toBe(200);
  });

  it('saves a new or changed address for a sign-in with a code, not a remembered device', async () => {
    const { deviceToken, shopperToken } = await signIn(true);
    const byDevice = { authorization: `Bearer ${(await resume(deviceToken)).json.shopperToken}` };
    const byCode = { authorization: `Bearer ${shopperToken}` };
    const before = (await service.call('GET', '/checkout/api/wallet', { headers: byDevice })).json;
    const [saved] = before.addresses;
    const elsewhere = {
      firstName: 'Someone',
      lastName: 'Else',
      address1: '9 Far Rd',
      city: 'Reno',
      state: 'NV',
      zip: '89501',
      country: 'US',
    };

    const added = await service.call('POST', '/checkout/api/wallet/addresses', {
      headers: byDevice,
      body: elsewhere,
    });
    expect([added.status, added.json.errorCode]).toEqual([403, 'CODE_REQUIRED']);
    expect(added.json.errorMessage).toMatch(/a new or changed address needs a one-time code/);
    const edited = await service.call('PATCH', `/checkout/api/wallet/addresses/${saved.addressId}`, {
      headers: byDevice,
      body: { address1: '9 Far Rd', zip: '89501' },
    });
    expect([edited.status, edited.json.errorCode]).toEqual([403, 'CODE_REQUIRED']);
    const after = await service.call('GET', '/checkout/api/wallet', { headers: byDevice });
    expect(after.json.addresses).toEqual(before.addresses);

    const defaultsOnly = await service.call('PATCH', `/checkout/api/wallet/addresses/${saved.addressId}`, {
      headers: byDevice,
      body: { address1: saved.address1, isDefaultShipping: true },
    });
    expect([defaultsOnly.status, defaultsOnly.json.address.addressId]).toEqual([200, saved.addressId]);
    const foreign = await service.call('PATCH', '/checkout/api/wallet/addresses/2147483647', {
      headers: byDevice,
      body: { address1: '9 Far Rd' },
    });
    expect([foreign.status, foreign.json.errorCode]).toEqual([404, 'ADDRESS_NOT_FOUND']);

    const byCodeAdded = await service.call('POST', '/checkout/api/wallet/addresses', {
      headers: byCode,
      body: elsewhere,
    });
    expect(byCodeAdded.status).toBe(201);
    const byCodeEdited = await service.call(
      'PATCH',
      `/checkout/api/wallet/addresses/${byCodeAdded.json.addressId}`,
      { headers: byCode, body: { address1: '10 Far Rd' } },
    );
    expect([byCodeEdited.status, byCodeEdited.json.address.address1]).toEqual([200, '10 Far Rd']);
  });

  it('records in the audit trail what each sign-in changed, with its order and proof, and the devices', async () => {
    const trail = new AuditTrail(service.services.db);
    const [last] = await trail.list({ limit: 1 });
    const shopper = await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL);
    const { deviceToken, shopperToken } = await signIn(true);
    const byCode = { authorization: `Bearer ${shopperToken}` };
    const added = await service.call('POST', '/checkout/api/wallet/addresses', {
      headers: byCode,
      body: {
        firstName: 'Test',
        lastName: 'Shopper',
        address1: '3 Elm St',
        city: 'Austin',
        state: 'TX',
        zip: '78703',
        country: 'US',
      },
    });
    const resumed = await resume(deviceToken);
    const byDevice = { authorization: `Bearer ${resumed.json.shopperToken}` };
    const { paymentId } = (await service.call('GET', '/checkout/api/wallet', { headers: byDevice })).json
      .cards[0];
    await service.call('PATCH', `/checkout/api/wallet/cards/${paymentId}`, {
      headers: byDevice,
      body: { nickName: 'Everyday' },
    });
    await service.call('POST', '/checkout/api/sign-out', { headers: byDevice, body: { deviceToken } });

    const events = await trail.list({ subject: shopper?.id as string, afterSeq: last?.seq ?? 0 });
    const actor = `shopper:${shopper?.id}`;
    const signedInAt = { orderId: expect.stringMatching(/^ord_/), proof: 'code' };
    expect(events.map(({ actor, action, details }) => ({ actor, action, details }))).toEqual([
      {
        actor,
        action: 'device.remembered',
        details: { orderId: expect.stringMatching(/^ord_/), merchantId, expiresAt: expect.any(String) },
      },
      { actor, action: 'wallet.address_added', details: { addressId: added.json.addressId, ...signedInAt } },
      {
        actor,
        action: 'wallet.card_changed',
        details: { paymentId, fields: ['nickName'], orderId: resumed.orderId, proof: 'device' },
      },
      {
        actor,
        action: 'device.forgotten',
        details: { orderId: resumed.orderId, reason: 'signed out on the device' },
      },
    ]);
    expect(events[0]?.details.orderId).toBe(events[1]?.details.orderId);
  });

  it('e-mails the shopper of each device remembered, with a link that forgets every device', async () => {
    const shopper = await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL);
    const { deviceToken, shopperToken } = await signIn(true);
    const byDevice = { authorization: `Bearer ${(await resume(deviceToken)).json.shopperToken}` };
    const told = await service.deviceEmail(TEST_SHOPPER_EMAIL);
    expect(told.text).toMatch(/^A browser checking out at .+ was set to remember you on \d{4}-\d{2}-\d{2}:/);
    const { pathname, search, searchParams } = told.link;

    // Following the link only asks: a mail scanner that opens it changes nothing.
    const asked = await service.call('GET', `${pathname}${search}`);
    expect([asked.status, asked.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(asked.text).toContain('<button type="submit">Forget every device</button>');
    expect((await resume(deviceToken)).status).toBe(200);

    const token = searchParams.get('token') as string;
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const forget = (value: string) =>
      service.call('POST', pathname, {
        rawBody: new URLSearchParams({ token: value }).toString(),
        headers: form,
      });
    const tampered = `${token.slice(0, -2)}xx`;
    for (const answer of [
      await forget(tampered),
      await service.call('GET', `${pathname}?token=${encodeURIComponent(tampered)}`),
    ]) {
      expect([answer.status, answer.text]).toEqual([400, expect.stringContaining('This link does not work')]);
    }
    const remembered = (await devices()).filter((device) => device.shopper_id === shopper?.id).length;
    expect(remembered).toBeGreaterThan(0);
    const forgotten = (await forget(token)).text;
    expect(forgotten).toContain(
      remembered === 1 ? 'One device forgot you.' : `${remembered} devices forgot you.`,
    );
    expect((await devices()).filter((device) => device.shopper_id === shopper?.id)).toEqual([]);
    expect((await resume(deviceToken)).status).toBe(401);
    // The checkout the device signed in ends; the one a code signed in goes on.
    expect((await service.call('GET', '/checkout/api/wallet', { headers: byDevice })).status).toBe(401);
    const byCode = { authorization: `Bearer ${shopperToken}` };
    expect((await service.call('GET', '/checkout/api/wallet', { headers: byCode })).status).toBe(200);
    expect((await forget(token)).text).toContain(
      'No device remembered you any more: there was nothing to forget.',
    );
    const [event] = await new AuditTrail(service.services.db).list({
      subject: shopper?.id as string,
      limit: 1,
    });
    expect(event).toMatchObject({
      actor: `shopper:${shopper?.id}`,
      action: 'device.forgotten',
      details: { reason: 'the shopper, from the e-mail about a remembered device', devices: 0 },
    });
  });

  it('ends a sign-in by the device that raced with the link forgetting every device', async () => {
    await signIn(true);
    const { deviceToken } = await signIn(true);
    const { link } = await service.deviceEmail(TEST_SHOPPER_EMAIL);
    const forgetAll = () =>
      service.call('POST', link.pathname, {
        rawBody: new URLSearchParams({ token: link.searchParams.get('token') as string }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    // The shopper forgets every device while the device's sign-in is between recognizing the device and
    // writing its token (it reads the shopper there).
    const { wallet } = service.services;
    const getShopper = wallet.getShopper;
    let forgot: Awaited<ReturnType<typeof forgetAll>> | undefined;
    wallet.getShopper = async (id) => {
      wallet.getShopper = getShopper;
      forgot = await forgetAll();
      return getShopper.call(wallet, id);
    };
    let resumed: Awaited<ReturnType<typeof resume>>;
    try {
      resumed = await resume(deviceToken);
    } finally {
      wallet.getShopper = getShopper;
    }
    expect(forgot?.text).toContain('forgot you');
    // Refused, or its checkout ended with the others: no sign-in by the device outlives the link.
    if (resumed.status === 200) {
      const headers = { authorization: `Bearer ${resumed.json.shopperToken}` };
      expect((await service.call('GET', '/checkout/api/wallet', { headers })).status).toBe(401);
    } else {
      expect([resumed.status, resumed.json.errorCode]).toEqual([401, 'DEVICE_NOT_RECOGNIZED']);
    }
    expect((await resume(deviceToken)).status).toBe(401);
  });

  it('deletes the wallet for a sign-in with a code, not a remembered device, and forgets its devices', async () => {
    const { deviceToken, shopperToken } = await signIn(true);
    const byDevice = { authorization: `Bearer ${(await resume(deviceToken)).json.shopperToken}` };
    const refused = await service.call('DELETE', '/checkout/api/wallet', { headers: byDevice });
    expect([refused.status, refused.json.errorCode]).toEqual([403, 'CODE_REQUIRED']);
    expect(refused.json.errorMessage).toMatch(/needs a one-time code/);
    const kept = await service.call('GET', '/checkout/api/wallet', { headers: byDevice });
    expect(kept.json.cards.length).toBeGreaterThan(0);
    const deleted = await service.call('DELETE', '/checkout/api/wallet', {
      headers: { authorization: `Bearer ${shopperToken}` },
    });
    expect(deleted.status).toBe(200);
    expect((await resume(deviceToken)).status).toBe(401);
    expect(await devices()).toEqual([]);
  });
});

describe.each(engines())('checkout page API: REMEMBER_DEVICE_DAYS on %s', (engine) => {
  it('sets how long a device is remembered; off, none is, and none remembered before signs in', async () => {
    const database = await testDatabase(engine);
    const started: TestService[] = [];
    const start = async (days: string) => {
      const service = await startTestService(engine, { REMEMBER_DEVICE_DAYS: days }, { database });
      started.push(service);
      return service;
    };
    /** The test shopper signs in to a new order of the shop, asking to be remembered. */
    const signIn = async (service: TestService, merchantId: string) => {
      const created = await service.call('POST', '/checkout/orders', {
        body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
        headers: { origin: SHOP },
      });
      const orderId: string = created.json.orderId;
      const email = TEST_SHOPPER_EMAIL;
      await service.call('POST', `/checkout/api/orders/${orderId}/otp`, { body: { email } });
      const verified = await service.call('POST', `/checkout/api/orders/${orderId}/otp/verify`, {
        body: { email, code: TEST_SHOPPER_CODE, rememberDevice: true },
      });
      return { orderId, json: verified.json };
    };
    try {
      const weekly = await start('7');
      const { merchantId } = await weekly.merchant({ allowedOrigins: [SHOP] });
      const before = Date.now();
      const { json: week } = await signIn(weekly, merchantId);
      expect(Date.parse(week.deviceExpiresAt) - before).toBeGreaterThanOrEqual(7 * DAY_MS);
      expect(Date.parse(week.deviceExpiresAt) - Date.now()).toBeLessThanOrEqual(7 * DAY_MS);

      // Another process on the same database with remembering turned off.
      const off = await start('off');
      const { orderId, json } = await signIn(off, merchantId);
      expect(Object.keys(json).sort()).toEqual(['expiresAt', 'shopperToken']);
      expect((await off.call('GET', `/checkout/api/orders/${orderId}`)).json.rememberDeviceDays).toBeNull();
      const resumed = await off.call('POST', `/checkout/api/orders/${orderId}/resume`, {
        body: { deviceToken: week.deviceToken },
      });
      expect([resumed.status, resumed.json.errorCode]).toEqual([401, 'DEVICE_NOT_RECOGNIZED']);
    } finally {
      for (const service of started) await service.close();
      await database.drop();
    }
  });
});
