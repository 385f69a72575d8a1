import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '../db/index.js';
import { createLogger } from '../log.js';
import { RateLimits } from '../rate-limits.js';
import { TEST_ACTOR } from '../test-support/actor.js';
import { engines, openTestDb } from '../test-support/db.js';
import { memoryLogger } from '../test-support/log.js';
import { KeyRing } from '../vault/keyring.js';
import { CardVault } from '../vault/vault.js';
import { Wallet } from '../wallet/index.js';
import { forgetSignIns, type Message, type MessageSender, ShopperAuth } from './index.js';
import { NOTICE_LEASE_MS, NOTICE_RETRY_DELAYS_MS } from './notices.js';

const START = Date.UTC(2030, 0, 1);
const PUBLIC_URL = 'https://pay.example.com';

/** The mail server's side, faked: it takes, refuses, or holds each message until let go. */
class FakeMailServer implements MessageSender {
  readonly sent: Message[] = [];
  refuseWith: Error | undefined;
  #held: (() => void)[] = [];
  #arrived: (() => void)[] = [];
  hold = false;

  async send(message: Message): Promise<void> {
    if (this.hold) {
      for (const resolve of this.#arrived.splice(0)) resolve();
      await new Promise<void>((resolve) => this.#held.push(resolve));
    }
    if (this.refuseWith) throw this.refuseWith;
    this.sent.push(message);
  }

  /** Resolves once a message is held (at once if one already is). */
  holding(): Promise<void> {
    if (this.#held.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.#arrived.push(resolve));
  }

  letGo(): void {
    this.hold = false;
    for (const resolve of this.#held.splice(0)) resolve();
  }
}

describe.each(engines())('e-mails to shoppers on %s (the mail server faked)', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let db: Db;
  let wallet: Wallet;
  const keyRing = new KeyRing([{ id: 'k1', key: randomBytes(32) }]);
  let now = START;
  let shoppers = 0;

  function service(mail = new FakeMailServer(), log = createLogger('silent')) {
    const auth = new ShopperAuth({
      db,
      keyRing,
      shoppers: wallet,
      sender: mail,
      env: 'production',
      log,
      limits: new RateLimits(db, () => now),
      now: () => now,
      rememberDeviceDays: 30,
      publicUrl: PUBLIC_URL,
    });
    return { auth, mail };
  }

  async function newShopper(): Promise<{ id: string; email: string }> {
    shoppers += 1;
    const shopper = await wallet.createShopper({
      email: `notice.${shoppers}@example.com`,
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    return { id: shopper.id, email: shopper.email };
  }

  const notices = (shopperId: string) =>
    db.kysely.selectFrom('shopper_notices').selectAll().where('shopper_id', '=', shopperId).execute();

  /** A notice due now, written as `rememberDevice` would, without waking anyone. */
  const dueNotice = (shopper: { id: string; email: string }) =>
    db.kysely
      .insertInto('shopper_notices')
      .values({
        id: `ntc_${shopper.id}`,
        shopper_id: shopper.id,
        email: shopper.email,
        kind: 'device_remembered',
        details: JSON.stringify({ shopName: 'Corner Shop', rememberedAt: now, expiresAt: now + 1 }),
        created_at: now,
        attempts: 0,
        next_attempt_at: now,
        last_error: null,
      })
      .execute();

  beforeAll(async () => {
    handle = await openTestDb(engine);
    db = handle.db;
    wallet = new Wallet(db, new CardVault(db, keyRing));
  });
  afterAll(() => handle.close());

  it('remembers a device without waiting for the mail server, and e-mails the shopper once it answers', async () => {
    const { auth, mail } = service();
    const shopper = await newShopper();
    mail.hold = true;
    const device = await auth.rememberDevice(
      shopper.id,
      { orderId: 'ord_1', merchantId: 'mch_1' },
      {
        email: shopper.email,
        shopName: 'Corner Shop',
      },
    );
    expect(device?.deviceToken).toBeDefined();
    await mail.holding();
    expect(mail.sent).toEqual([]);
    expect(await notices(shopper.id)).toEqual([
      expect.objectContaining({ email: shopper.email, kind: 'device_remembered', attempts: 1 }),
    ]);
    // What is stored is what the e-mail is made of, never its link.
    expect(JSON.stringify(await notices(shopper.id))).not.toContain('token=');

    mail.letGo();
    await auth.notices.settled();
    expect(mail.sent).toEqual([
      {
        to: shopper.email,
        subject: 'A device now remembers you for checkout',
        text: expect.stringMatching(
          /^A browser checking out at Corner Shop was set to remember you on 2030-01-01: on it,\ncheckouts at that shop open on your wallet without a one-time code until 2030-01-31\./,
        ),
      },
    ]);
    const link = /(https:\S+\/checkout\/devices\/forget\?token=(\S+))/.exec(mail.sent[0]?.text ?? '');
    expect(link?.[1]?.startsWith(`${PUBLIC_URL}/checkout/devices/forget?token=${shopper.id}.`)).toBe(true);
    expect(await auth.forgetDevicesByLink(link?.[2] as string)).toEqual({ forgotten: 1 });
    expect(await notices(shopper.id)).toEqual([]);
  });

  it('sends a refused e-mail again on the schedule, keeps no address in the reason, and gives up after the last attempt', async () => {
    const { log, lines } = memoryLogger();
    const { auth, mail } = service(new FakeMailServer(), log);
    const shopper = await newShopper();
    mail.refuseWith = new Error(`450 4.2.1 <${shopper.email}>: Mailbox busy, try again later`);
    await auth.rememberDevice(
      shopper.id,
      { orderId: 'ord_2', merchantId: 'mch_1' },
      { email: shopper.email, shopName: 'Corner Shop' },
    );
    await auth.notices.settled();

    for (const [index, delay] of NOTICE_RETRY_DELAYS_MS.entries()) {
      const [pending] = await notices(shopper.id);
      expect(pending).toMatchObject({
        attempts: index + 1,
        next_attempt_at: now + delay,
        last_error: '450 4.2.1 <<address>>: Mailbox busy, try again later',
      });
      // Not due a millisecond early.
      now += delay - 1;
      auth.notices.wake();
      await auth.notices.settled();
      expect((await notices(shopper.id))[0]?.attempts).toBe(index + 1);
      now += 1;
      auth.notices.wake();
      await auth.notices.settled();
    }
    expect(await notices(shopper.id)).toEqual([]);
    expect(mail.sent).toEqual([]);
    const retries = lines.filter(
      (line) => line.msg === 'an e-mail to a shopper could not be sent; it is tried again',
    );
    expect(retries).toHaveLength(NOTICE_RETRY_DELAYS_MS.length);
    const [gaveUp] = lines.filter(
      (line) => line.msg === 'gave up on an e-mail to a shopper after its last attempt',
    );
    expect(gaveUp).toMatchObject({
      level: 50,
      notice: {
        kind: 'device_remembered',
        shopperId: shopper.id,
        attempts: NOTICE_RETRY_DELAYS_MS.length + 1,
      },
    });
    expect(JSON.stringify(lines)).not.toContain(shopper.email);
  });

  it('sends the e-mail of a process stopped mid-send from another process once its lease runs out', async () => {
    const stopped = service();
    const other = service();
    const shopper = await newShopper();
    stopped.mail.hold = true;
    await stopped.auth.rememberDevice(
      shopper.id,
      { orderId: 'ord_3', merchantId: 'mch_1' },
      { email: shopper.email, shopName: 'Corner Shop' },
    );
    await stopped.mail.holding();

    // While the first process holds the lease, the other sends nothing.
    other.auth.notices.wake();
    await other.auth.notices.settled();
    expect(other.mail.sent).toEqual([]);

    now += NOTICE_LEASE_MS;
    other.auth.notices.wake();
    await other.auth.notices.settled();
    expect(other.mail.sent.map((message) => message.to)).toEqual([shopper.email]);
    expect(await notices(shopper.id)).toEqual([]);

    // Had the first process's send gone through after all, the shopper would get the e-mail twice: at
    // least once, never lost.
    stopped.mail.letGo();
    await stopped.auth.notices.stop();
    expect(await notices(shopper.id)).toEqual([]);
  });

  it('sends each of many e-mails once when two processes are woken together', async () => {
    const first = service();
    const second = service();
    const remembered = await Promise.all(
      Array.from({ length: 45 }, async () => {
        const shopper = await newShopper();
        await dueNotice(shopper);
        return shopper.email;
      }),
    );
    first.auth.notices.wake();
    second.auth.notices.wake();
    await Promise.all([first.auth.notices.settled(), second.auth.notices.settled()]);
    const sent = [...first.mail.sent, ...second.mail.sent].map((message) => message.to);
    expect(sent.sort()).toEqual(remembered.sort());
  });

  it('stops within its grace while the mail server hangs, leaving the e-mail to its lease and giving back the rest', async () => {
    const { auth, mail } = service();
    const shoppers = [await newShopper(), await newShopper()];
    for (const shopper of shoppers) await dueNotice(shopper);
    mail.hold = true;
    auth.notices.wake();
    await mail.holding();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const stopping = auth.notices.stop();
      await vi.advanceTimersByTimeAsync(5_000);
      await stopping;
    } finally {
      vi.useRealTimers();
    }
    const rows = async () => [
      ...(await notices(shoppers[0]?.id ?? '')),
      ...(await notices(shoppers[1]?.id ?? '')),
    ];
    expect((await rows()).map((row) => row.attempts)).toEqual([1, 1]);
    mail.letGo();
    await auth.notices.settled();
    // The held one went; the other was given back untried, due now for whichever process polls.
    expect(mail.sent).toHaveLength(1);
    expect(await rows()).toEqual([expect.objectContaining({ attempts: 0, next_attempt_at: now })]);
    // Sent by another process, so that the next test's service does not.
    const other = service();
    other.auth.notices.wake();
    await other.auth.notices.settled();
    expect(await rows()).toEqual([]);
  });

  it("drops an e-mail whose address is no longer its shopper's, as after an erasure by an older version", async () => {
    const { log, lines } = memoryLogger();
    const { auth, mail } = service(new FakeMailServer(), log);
    const shopper = await newShopper();
    mail.refuseWith = new Error('421 4.3.2 Service not available');
    await auth.rememberDevice(
      shopper.id,
      { orderId: 'ord_6', merchantId: 'mch_1' },
      { email: shopper.email, shopName: 'Corner Shop' },
    );
    await auth.notices.settled();
    // The wallet's own erasure, without the sign-ins' (what a process from before 021 leaves).
    await wallet.eraseShopper(shopper.id, TEST_ACTOR);
    mail.refuseWith = undefined;
    now += NOTICE_RETRY_DELAYS_MS[0] as number;
    auth.notices.wake();
    await auth.notices.settled();
    expect(mail.sent).toEqual([]);
    expect(await notices(shopper.id)).toEqual([]);
    expect(lines.map((line) => line.msg)).toContain(
      'an e-mail to a shopper was dropped: the address is no longer theirs',
    );
  });

  it('erasing a shopper deletes the e-mails not yet sent to them', async () => {
    const { auth, mail } = service();
    const shopper = await newShopper();
    mail.hold = true;
    await auth.rememberDevice(
      shopper.id,
      { orderId: 'ord_4', merchantId: 'mch_1' },
      { email: shopper.email, shopName: 'Corner Shop' },
    );
    expect(await notices(shopper.id)).toHaveLength(1);
    await forgetSignIns(db, { forget: async () => undefined, forgetPrefix: async () => undefined }, shopper);
    expect(await notices(shopper.id)).toEqual([]);
    mail.letGo();
    await auth.notices.stop();
  });
});
