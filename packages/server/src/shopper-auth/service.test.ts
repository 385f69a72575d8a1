import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WalletEnv } from '../config.js';
import { DomainError } from '../errors.js';
import { createLogger } from '../log.js';
import { RateLimits } from '../rate-limits.js';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { engines, openTestDb } from '../test-support/db.js';
import { KeyRing } from '../vault/keyring.js';
import { CardVault } from '../vault/vault.js';
import { Wallet } from '../wallet/index.js';
import {
  CODE_TTL_MS,
  CODES_PER_DAY,
  CODES_PER_DAY_PER_CLIENT,
  forgetSignIns,
  type Message,
  type MessageSender,
  OtpInvalidError,
  OtpThrottledError,
  RESEND_GAP_MS,
  SHOPPER_TOKEN_TTL_MS,
  ShopperAuth,
} from './index.js';

const START = Date.UTC(2030, 0, 1);

async function errorOf(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

function codeIn(message: Message | undefined): string {
  const code = /\b(\d{6})\b/.exec(message?.text ?? '')?.[1];
  if (!code) throw new Error(`no code in ${JSON.stringify(message)}`);
  return code;
}

/** Another code than `code`, same shape: a guaranteed wrong guess. */
function wrong(code: string): string {
  return code === '000000' ? '000001' : '000000';
}

class Outbox implements MessageSender {
  readonly sent: Message[] = [];
  failWith: Error | undefined;

  async send(message: Message): Promise<void> {
    if (this.failWith) throw this.failWith;
    this.sent.push(message);
  }

  lastTo(email: string): Message | undefined {
    return this.sent.filter((message) => message.to === email).at(-1);
  }
}

describe.each(engines())('ShopperAuth on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let wallet: Wallet;
  const k1 = { id: 'k1', key: randomBytes(32) };
  const keyRing = new KeyRing([k1]);
  let now = START;
  let emails = 0;

  /** A shopper with a fresh email, so the resend throttle of one test never touches another. */
  async function newShopper(): Promise<{ id: string; email: string }> {
    emails += 1;
    const shopper = await wallet.createShopper({
      email: `Shopper.${emails}@Example.com`,
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    return { id: shopper.id, email: shopper.email };
  }

  function service(env: WalletEnv = 'production', outbox = new Outbox(), ring = keyRing) {
    const auth = new ShopperAuth({
      db: handle.db,
      keyRing: ring,
      shoppers: wallet,
      sender: outbox,
      env,
      log: createLogger('silent'),
      limits: new RateLimits(handle.db, () => now),
      now: () => now,
    });
    return { auth, outbox };
  }

  beforeAll(async () => {
    handle = await openTestDb(engine);
    wallet = new Wallet(handle.db, new CardVault(handle.db, keyRing));
    await wallet.createShopper({ email: TEST_SHOPPER_EMAIL, firstName: 'Taylor', lastName: 'Shopper' });
  });
  afterAll(() => handle.close());

  it('sends a 6-digit code to a known shopper and proves it for a token bound to the shopper and order', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    expect(await auth.requestCode('ord_1', shopper.email)).toEqual({
      status: 'sent',
      destination: `S***${shopper.email.split('@')[0]?.slice(-1)}@Example.com`,
    });
    expect(outbox.sent).toHaveLength(1);
    expect(outbox.sent[0]).toMatchObject({ to: shopper.email, subject: 'Your checkout code' });
    const code = codeIn(outbox.sent[0]);
    expect(code).toMatch(/^\d{6}$/);

    // Any case and surrounding spaces name the same email.
    const grant = await auth.verifyCode('ord_1', `  ${shopper.email.toLowerCase()} `, code);
    expect(grant.shopperToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(grant.expiresAt).toBe(new Date(now + SHOPPER_TOKEN_TTL_MS).toISOString());
    expect(await auth.authenticate(grant.shopperToken)).toEqual({
      shopperId: shopper.id,
      orderId: 'ord_1',
      proof: 'code',
    });
    expect(await auth.authenticate('not-a-token')).toBeUndefined();
  });

  it("sends the code to the wallet's own address, not to another spelling that normalizes alike", async () => {
    const { auth, outbox } = service();
    const kate = await wallet.createShopper({
      email: `kate.${emails}@example.com`,
      firstName: 'Kate',
      lastName: 'Bush',
    });
    // U+212A KELVIN SIGN lower-cases to an ASCII "k": the same wallet, another mailbox.
    const typed = `\u212A${kate.email.slice(1)}`;
    expect(await auth.requestCode('ord_kelvin', typed)).toMatchObject({ status: 'sent' });
    expect(outbox.sent.map((message) => message.to)).toEqual([kate.email]);
  });

  it('answers enrol for an unknown email and sends nothing', async () => {
    const { auth, outbox } = service();
    expect(await auth.requestCode('ord_1', 'nobody@example.com')).toEqual({ status: 'enrol' });
    expect(outbox.sent).toEqual([]);
  });

  it('lets a new shopper prove the email, enrol, and then use the same token', async () => {
    const { auth, outbox } = service();
    const email = 'new.shopper@example.com';
    expect(await auth.requestCode('ord_2', email, { enrol: true })).toEqual({
      status: 'sent',
      destination: 'n***r@example.com',
    });
    const { shopperToken } = await auth.verifyCode('ord_2', email, codeIn(outbox.lastTo(email)));
    // Proved, but not a shopper yet: the wallet's routes must not accept it.
    expect(await auth.authenticate(shopperToken)).toBeUndefined();
    expect(await auth.authenticateEnrolment(shopperToken)).toEqual({ email, orderId: 'ord_2' });

    const shopper = await wallet.createShopper({ email, firstName: 'New', lastName: 'Shopper' });
    await auth.completeEnrolment(shopperToken, shopper.id);
    expect(await auth.authenticate(shopperToken)).toEqual({
      shopperId: shopper.id,
      orderId: 'ord_2',
      proof: 'code',
    });
    expect(await auth.authenticateEnrolment(shopperToken)).toBeUndefined();
    expect((await errorOf(auth.completeEnrolment(shopperToken, shopper.id))).errorCode).toBe('UNAUTHORIZED');
  });

  it('counts wrong codes down, locks the code at the fifth try, and a new code works again', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_1', shopper.email);
    const code = codeIn(outbox.lastTo(shopper.email));
    for (const left of [4, 3, 2, 1]) {
      const error = await errorOf(auth.verifyCode('ord_1', shopper.email, wrong(code)));
      expect(error).toBeInstanceOf(OtpInvalidError);
      expect(error.errorCode).toBe('OTP_INVALID');
      expect(error.status).toBe(401);
      expect((error as OtpInvalidError).triesLeft).toBe(left);
      expect(error.message).toBe(
        `The code is not correct; ${left} ${left === 1 ? 'try' : 'tries'} left before a new code is needed.`,
      );
    }
    const fifth = await errorOf(auth.verifyCode('ord_1', shopper.email, wrong(code)));
    expect([fifth.errorCode, fifth.status]).toEqual(['OTP_LOCKED', 403]);
    // Dead even for the right code.
    expect((await errorOf(auth.verifyCode('ord_1', shopper.email, code))).errorCode).toBe('OTP_LOCKED');

    now += RESEND_GAP_MS;
    await auth.requestCode('ord_1', shopper.email);
    const next = codeIn(outbox.lastTo(shopper.email));
    expect((await auth.verifyCode('ord_1', shopper.email, next)).shopperToken).toBeTruthy();
  });

  it('counts parallel wrong guesses one by one: never more than 5 tries', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_1', shopper.email);
    const code = codeIn(outbox.lastTo(shopper.email));
    const guesses = await Promise.all(
      Array.from({ length: 8 }, () => errorOf(auth.verifyCode('ord_1', shopper.email, wrong(code)))),
    );
    const codes = guesses.map((error) => error.errorCode).sort();
    expect(codes).toEqual([...Array(4).fill('OTP_INVALID'), ...Array(4).fill('OTP_LOCKED')].sort());
    expect((await errorOf(auth.verifyCode('ord_1', shopper.email, code))).errorCode).toBe('OTP_LOCKED');
  });

  it('expires a code after 10 minutes', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_1', shopper.email);
    const code = codeIn(outbox.lastTo(shopper.email));
    now += CODE_TTL_MS - 1;
    expect(await errorOf(auth.verifyCode('ord_1', shopper.email, wrong(code)))).toBeInstanceOf(
      OtpInvalidError,
    );
    now += 1;
    const error = await errorOf(auth.verifyCode('ord_1', shopper.email, code));
    expect([error.errorCode, error.status]).toEqual(['OTP_EXPIRED', 401]);
    expect(error.message).toMatch(/expired/);
  });

  it('accepts a code sent before a key rotation in a process already on the new key', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_rotation', shopper.email);
    const code = codeIn(outbox.lastTo(shopper.email));
    const stranger = service('production', new Outbox(), new KeyRing([{ id: 'k9', key: randomBytes(32) }]));
    expect((await errorOf(stranger.auth.verifyCode('ord_rotation', shopper.email, code))).errorCode).toBe(
      'OTP_INVALID',
    );
    const rotated = service(
      'production',
      new Outbox(),
      new KeyRing([{ id: 'k2', key: randomBytes(32) }, k1]),
    );
    const grant = await rotated.auth.verifyCode('ord_rotation', shopper.email, code);
    expect(await rotated.auth.authenticate(grant.shopperToken)).toEqual({
      shopperId: shopper.id,
      orderId: 'ord_rotation',
      proof: 'code',
    });
  });

  it('accepts a code once', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_1', shopper.email);
    const code = codeIn(outbox.lastTo(shopper.email));
    const [first, second] = await Promise.allSettled([
      auth.verifyCode('ord_1', shopper.email, code),
      auth.verifyCode('ord_1', shopper.email, code),
    ]);
    const outcomes = [first?.status, second?.status].sort();
    expect(outcomes).toEqual(['fulfilled', 'rejected']);
    expect((await errorOf(auth.verifyCode('ord_1', shopper.email, code))).errorCode).toBe('OTP_EXPIRED');
  });

  it('binds a code to its order, and a newer code replaces the older one', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_A', shopper.email);
    const first = codeIn(outbox.lastTo(shopper.email));
    expect((await errorOf(auth.verifyCode('ord_B', shopper.email, first))).errorCode).toBe('OTP_EXPIRED');

    now += RESEND_GAP_MS;
    await auth.requestCode('ord_A', shopper.email);
    const second = codeIn(outbox.lastTo(shopper.email));
    if (second !== first) {
      const error = await errorOf(auth.verifyCode('ord_A', shopper.email, first));
      expect(error.errorCode).toBe('OTP_INVALID');
    }
    const { shopperToken } = await auth.verifyCode('ord_A', shopper.email, second);
    expect(await auth.authenticate(shopperToken)).toEqual({
      shopperId: shopper.id,
      orderId: 'ord_A',
      proof: 'code',
    });
  });

  it('throttles codes to one email to one per 30 seconds, across orders, and says how long to wait', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_1', shopper.email);
    now += 1_000;
    const error = await errorOf(auth.requestCode('ord_2', shopper.email.toUpperCase()));
    expect(error).toBeInstanceOf(OtpThrottledError);
    expect([error.errorCode, error.status]).toEqual(['OTP_THROTTLED', 429]);
    expect((error as OtpThrottledError).retryAfterSeconds).toBe(29);
    expect(error.message).toBe(
      'A code was sent to this email a moment ago; wait 29 seconds before asking for another.',
    );
    now += RESEND_GAP_MS - 1_000 - 1;
    expect(
      ((await errorOf(auth.requestCode('ord_1', shopper.email))) as OtpThrottledError).retryAfterSeconds,
    ).toBe(1);
    now += 1;
    expect((await auth.requestCode('ord_1', shopper.email)).status).toBe('sent');
    expect(outbox.sent).toHaveLength(2);
  });

  it('sends at most 10 codes to one email a day for one client, then says in hours when it may ask again', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    const first = now;
    for (let i = 0; i < CODES_PER_DAY_PER_CLIENT; i++) {
      expect((await auth.requestCode(`ord_day_${i}`, shopper.email, { client: 'a' })).status).toBe('sent');
      now += RESEND_GAP_MS;
    }
    const error = await errorOf(auth.requestCode('ord_day_x', shopper.email, { client: 'a' }));
    expect(error).toBeInstanceOf(OtpThrottledError);
    expect([error.errorCode, error.status]).toEqual(['OTP_THROTTLED', 429]);
    // The day counts from the first code: 24 h less the ten 30 s gaps since.
    expect((error as OtpThrottledError).retryAfterSeconds).toBe(86_400 - 10 * 30);
    expect(error.message).toBe(
      '10 codes to this email were asked for from your network in the last day, the most it may ask for; ask again in 24 hours.',
    );
    // A refusal starts no 30 s gap of its own: asking again at once is refused for the day again.
    const again = (await errorOf(
      auth.requestCode('ord_day_x', shopper.email, { client: 'a' }),
    )) as OtpThrottledError;
    expect(again.message).toContain('in the last day');
    expect(outbox.sent.filter((message) => message.to === shopper.email)).toHaveLength(
      CODES_PER_DAY_PER_CLIENT,
    );
    // Someone asking from elsewhere, the shopper for one, still gets a code.
    expect((await auth.requestCode('ord_day_x', shopper.email, { client: 'b' })).status).toBe('sent');

    now = first + 24 * 60 * 60_000;
    expect((await auth.requestCode('ord_day_y', shopper.email, { client: 'a' })).status).toBe('sent');
  });

  it('sends at most 30 codes to one email a day from every client together, without using up a refused client', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    const clients = ['a', 'b', 'c'];
    const first = now;
    for (const client of clients) {
      for (let i = 0; i < CODES_PER_DAY_PER_CLIENT; i++) {
        expect((await auth.requestCode(`ord_all_${i}`, shopper.email, { client })).status).toBe('sent');
        now += RESEND_GAP_MS;
      }
    }
    expect(CODES_PER_DAY).toBe(clients.length * CODES_PER_DAY_PER_CLIENT);
    const error = await errorOf(auth.requestCode('ord_all_x', shopper.email, { client: 'd' }));
    expect(error).toBeInstanceOf(OtpThrottledError);
    expect(error.message).toBe(
      '30 codes were sent to this email in the last day, the most it gets; ask again in 24 hours.',
    );
    expect(outbox.sent.filter((message) => message.to === shopper.email)).toHaveLength(CODES_PER_DAY);
    // Client d was refused for the email's day, not its own: its 10 are whole once the email's day ends,
    // while its own day, begun with the refusal, runs on.
    now = first + 24 * 60 * 60_000;
    for (let i = 0; i < CODES_PER_DAY_PER_CLIENT; i++) {
      expect((await auth.requestCode(`ord_all_${i}`, shopper.email, { client: 'd' })).status).toBe('sent');
      now += RESEND_GAP_MS;
    }
  });

  /** Strangers on three networks ask for codes to `email` until its day is used up. */
  const useUpTheDay = async (auth: ReturnType<typeof service>['auth'], email: string) => {
    for (let i = 0; ; i++) {
      const client = `stranger-${Math.floor(i / CODES_PER_DAY_PER_CLIENT)}`;
      const refused = await auth.requestCode(`ord_stranger_${i}`, email, { client }).then(
        () => false,
        () => true,
      );
      now += RESEND_GAP_MS;
      if (refused) return;
    }
  };

  it("still sends codes, within its own cap, to a client that proved the email once others used up the email's day", async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    // The shopper signs in from home…
    await auth.requestCode('ord_home', shopper.email, { client: 'home' });
    await auth.verifyCode('ord_home', shopper.email, codeIn(outbox.lastTo(shopper.email)), 'home');
    now += RESEND_GAP_MS;
    // …then strangers use up the email's day.
    await useUpTheDay(auth, shopper.email);
    const stranger = await errorOf(auth.requestCode('ord_w', shopper.email, { client: 'w' }));
    expect(stranger.message).toBe(
      '30 codes were sent to this email in the last day, the most it gets; ask again in 24 hours.',
    );
    // Home still gets its codes, up to its own 10 a day (one of which it used).
    for (let i = 1; i < CODES_PER_DAY_PER_CLIENT; i++) {
      expect((await auth.requestCode(`ord_home_${i}`, shopper.email, { client: 'home' })).status).toBe(
        'sent',
      );
      now += RESEND_GAP_MS;
    }
    const home = await errorOf(auth.requestCode('ord_home_x', shopper.email, { client: 'home' }));
    expect(home.message).toContain('asked for from your network in the last day');
    // The email's 30 (home's first among them), and home's other 9.
    expect(outbox.sent.filter((message) => message.to === shopper.email)).toHaveLength(
      CODES_PER_DAY + CODES_PER_DAY_PER_CLIENT - 1,
    );
  });

  it('proves no client with a right code from an unknown or unreadable address, which everyone shares', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    for (const client of [undefined, 'unreadable']) {
      await auth.requestCode(`ord_${client}`, shopper.email, client ? { client } : {});
      const code = codeIn(outbox.lastTo(shopper.email));
      await auth.verifyCode(`ord_${client}`, shopper.email, code, client);
      now += RESEND_GAP_MS;
    }
    await useUpTheDay(auth, shopper.email);
    for (const client of [undefined, 'unreadable']) {
      const refused = await errorOf(auth.requestCode('ord_late', shopper.email, client ? { client } : {}));
      expect(refused.message).toContain('30 codes were sent to this email');
    }
  });

  it('sends one code when several requests for one email arrive at once', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => auth.requestCode(`ord_${i}`, shopper.email)),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(outbox.sent).toHaveLength(1);
  });

  it('gives the staging test shopper 123456 every time, without the throttle', async () => {
    const { auth, outbox } = service('staging');
    for (const orderId of ['ord_t1', 'ord_t2']) {
      expect(await auth.requestCode(orderId, TEST_SHOPPER_EMAIL)).toEqual({
        status: 'sent',
        destination: 't***r@example.com',
      });
    }
    expect(outbox.sent.map(codeIn)).toEqual(['123456', '123456']);
    const { shopperToken } = await auth.verifyCode('ord_t2', TEST_SHOPPER_EMAIL, '123456');
    expect((await auth.authenticate(shopperToken))?.orderId).toBe('ord_t2');
    // Still single use, and only for its order.
    expect((await errorOf(auth.verifyCode('ord_t2', TEST_SHOPPER_EMAIL, '123456'))).errorCode).toBe(
      'OTP_EXPIRED',
    );

    // Any other staging shopper gets a random code.
    const other = await newShopper();
    await auth.requestCode('ord_t1', other.email);
    expect(codeIn(outbox.lastTo(other.email))).not.toBe('123456');
  });

  it('never gives the test shopper 123456 in production', async () => {
    const { auth, outbox } = service('production');
    now += RESEND_GAP_MS;
    await auth.requestCode('ord_p', TEST_SHOPPER_EMAIL);
    const code = codeIn(outbox.lastTo(TEST_SHOPPER_EMAIL));
    expect(code).not.toBe('123456');
    expect((await errorOf(auth.verifyCode('ord_p', TEST_SHOPPER_EMAIL, '123456'))).errorCode).toBe(
      'OTP_INVALID',
    );
    // Production throttles it like anyone else.
    expect((await errorOf(auth.requestCode('ord_p', TEST_SHOPPER_EMAIL))).errorCode).toBe('OTP_THROTTLED');
  });

  it('stores codes and tokens only as keyed or plain hashes', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_h', shopper.email);
    const code = codeIn(outbox.lastTo(shopper.email));
    const { kysely } = handle.db;
    // Timestamps (ms, 13 digits, numbers or text) left out: a six-digit code would turn up in their digits
    // by chance. A code stored as a six-digit number or text would still show.
    const textOf = (rows: unknown[]) => JSON.stringify(rows).replace(/":"?\d{10,}"?/g, '":0');
    const codeRows = textOf(await kysely.selectFrom('one_time_codes').selectAll().execute());
    expect(codeRows).not.toContain(code);
    const plainHash = createHash('sha256').update(code).digest('base64url');
    expect(codeRows).not.toContain(plainHash);

    const { shopperToken } = await auth.verifyCode('ord_h', shopper.email, code);
    const tables = ['one_time_codes', 'one_time_code_sends', 'shopper_tokens', 'sandbox_messages'] as const;
    for (const table of tables) {
      const rows = textOf(await kysely.selectFrom(table).selectAll().execute());
      expect(rows).not.toContain(code);
      expect(rows).not.toContain(shopperToken);
    }
    const tokenRow = await kysely
      .selectFrom('shopper_tokens')
      .selectAll()
      .where('token_hash', '=', createHash('sha256').update(shopperToken).digest('hex'))
      .executeTakeFirst();
    expect(tokenRow).toMatchObject({ order_id: 'ord_h', shopper_id: shopper.id });
  });

  it('ends a token after 30 minutes', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_1', shopper.email);
    const { shopperToken } = await auth.verifyCode(
      'ord_1',
      shopper.email,
      codeIn(outbox.lastTo(shopper.email)),
    );
    now += SHOPPER_TOKEN_TTL_MS - 1;
    expect(await auth.authenticate(shopperToken)).toBeDefined();
    now += 1;
    expect(await auth.authenticate(shopperToken)).toBeUndefined();
  });

  it('gives the throttle back and keeps no code when the message cannot be sent', async () => {
    const outbox = new Outbox();
    const { auth } = service('production', outbox);
    const shopper = await newShopper();
    outbox.failWith = new Error('connect ECONNREFUSED 127.0.0.1:25');
    const error = await errorOf(auth.requestCode('ord_f', shopper.email));
    expect([error.errorCode, error.status]).toEqual(['MESSAGE_NOT_SENT', 503]);
    expect(error.message).not.toMatch(/ECONNREFUSED/);
    const rows = await handle.db.kysely
      .selectFrom('one_time_codes')
      .select('order_id')
      .where('order_id', '=', 'ord_f')
      .execute();
    expect(rows).toEqual([]);

    // Nor does a failed send count against the email's day.
    for (let i = 0; i < CODES_PER_DAY; i++) {
      expect((await errorOf(auth.requestCode('ord_f', shopper.email))).errorCode).toBe('MESSAGE_NOT_SENT');
    }
    outbox.failWith = undefined;
    expect((await auth.requestCode('ord_f', shopper.email)).status).toBe('sent');
  });

  it('rejects a malformed email or code without counting a try', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    expect((await errorOf(auth.requestCode('ord_1', 'not-an-email'))).errorCode).toBe('VALIDATION_ERROR');
    await auth.requestCode('ord_1', shopper.email);
    const code = codeIn(outbox.lastTo(shopper.email));
    for (let i = 0; i < 6; i++) {
      const error = await errorOf(auth.verifyCode('ord_1', shopper.email, '12 456'));
      expect([error.errorCode, error.message]).toEqual(['VALIDATION_ERROR', 'code: must be 6 digits']);
    }
    expect((await auth.verifyCode('ord_1', shopper.email, code)).shopperToken).toBeTruthy();
  });

  it("forgets an erased shopper's sign-ins: its tokens, its codes and sends, and the day's count", async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    const other = await newShopper();
    for (const { email } of [shopper, other]) await auth.requestCode('ord_forget', email);
    const grant = await auth.verifyCode('ord_forget', shopper.email, codeIn(outbox.lastTo(shopper.email)));
    now += RESEND_GAP_MS;
    await auth.requestCode('ord_forget_2', shopper.email);
    const limits = new RateLimits(handle.db, () => now);
    /** Rows naming the email in each table that may. */
    const rows = async (email: string) => {
      const named = async (table: string, column: string, value: string) => {
        const query = sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}
          where ${sql.ref(column)} like ${value}`;
        return Number((await query.execute(handle.db.kysely)).rows[0]?.n);
      };
      const normalized = email.toLowerCase();
      return {
        codes: await named('one_time_codes', 'email_normalized', normalized),
        sends: await named('one_time_code_sends', 'email_normalized', normalized),
        counts:
          (await named('rate_limit_windows', 'key', `%:${normalized}`)) +
          (await named('rate_limit_windows', 'key', `%:${normalized} %`)),
      };
    };
    // The email's day, and its day for the one client it was asked from.
    expect(await rows(shopper.email)).toEqual({ codes: 2, sends: 1, counts: 2 });

    expect(await forgetSignIns(handle.db, limits, shopper)).toBe(4);
    expect(await auth.authenticate(grant.shopperToken)).toBeUndefined();
    expect(await rows(shopper.email)).toEqual({ codes: 0, sends: 0, counts: 0 });
    // Another shopper's are untouched.
    expect(await rows(other.email)).toEqual({ codes: 1, sends: 1, counts: 2 });
  });

  it('sweeps dead codes and expired tokens', async () => {
    const { auth, outbox } = service();
    const shopper = await newShopper();
    await auth.requestCode('ord_s', shopper.email);
    await auth.verifyCode('ord_s', shopper.email, codeIn(outbox.lastTo(shopper.email)));
    now += SHOPPER_TOKEN_TTL_MS;
    expect(await auth.sweep()).toBeGreaterThanOrEqual(2);
    const { kysely } = handle.db;
    expect(
      await kysely.selectFrom('one_time_codes').select('order_id').where('order_id', '=', 'ord_s').execute(),
    ).toEqual([]);
    expect(
      await kysely.selectFrom('shopper_tokens').select('order_id').where('order_id', '=', 'ord_s').execute(),
    ).toEqual([]);
  });
});
