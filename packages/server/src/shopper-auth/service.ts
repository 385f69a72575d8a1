import { createHmac } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { type Actor, type AuditDetails, recordAudit, shopperActor } from '../audit/index.js';
import type { WalletEnv } from '../config.js';
import type { Database, Db } from '../db/index.js';
import type { SignInProof } from '../db/schema.js';
import { DomainError, ValidationError } from '../errors.js';
import type { Logger } from '../log.js';
import { type RateLimits, UNREADABLE_CLIENT } from '../rate-limits.js';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import type { KeyRing } from '../vault/keyring.js';
import {
  hashCode,
  hashToken,
  isCodeShaped,
  isEmail,
  maskEmail,
  newCode,
  newShopperToken,
  normalizeEmail,
  sameHash,
} from './codes.js';
import { OtpInvalidError, OtpThrottledError } from './errors.js';
import type { Message, MessageSender } from './messages.js';
import { enqueueNotice, type NoticeRow, ShopperNotices } from './notices.js';
import * as repo from './repo.js';

/** 10 min: long enough to switch to the mail app and back, short enough that a leaked code soon dies. */
export const CODE_TTL_MS = 10 * 60_000;
/** 5 tries in all per code: a guesser's odds are 5 in a million per code sent. */
export const MAX_ATTEMPTS = 5;
/** 30 s between codes to one email: stops a page from flooding a mailbox, and guessing by resending. */
export const RESEND_GAP_MS = 30_000;
/**
 * 10 codes to one email in 24 hours asked for from one client address: a shopper who checks out several
 * times a day, resending now and then, stays well below it.
 */
export const CODES_PER_DAY_PER_CLIENT = 10;
/**
 * 30 codes to one email in 24 hours from every client address together: a guesser gets 150 tries a day at
 * a million codes instead of 14,400 at one code per RESEND_GAP_MS. Someone who asks for codes to another
 * person's email only to use up its day would keep that person from a code, but not from a client
 * address that proved the email lately (PROVEN_CLIENT_MS): there only its own cap applies.
 */
export const CODES_PER_DAY = 30;
/**
 * 30 days: how long a client address that entered a right code for an email goes on getting codes for it
 * once the email's day is used up; a shopper's home or office network, which a stranger is not on.
 */
export const PROVEN_CLIENT_MS = 30 * 24 * 60 * 60_000;
const DAY_MS = 24 * 60 * 60_000;
/** 30 min: one checkout, as long as a payment-carousel session. */
export const SHOPPER_TOKEN_TTL_MS = 30 * 60_000;
/** DESIGN.md §3: in staging the test shopper's code is always this. */
export const TEST_SHOPPER_CODE = '123456';
/** 1 day: staging messages are for reading the code of a test run, not an archive. */
const SANDBOX_MESSAGE_LIFE_MS = DAY_MS;

/** The wallet's face as far as sign-in needs it. */
export interface ShopperDirectory {
  /** The shopper whose email normalizes as `email` does, with the email as the wallet keeps it. */
  findShopperByEmail(email: string): Promise<{ id: string; email: string } | undefined>;
}

export type CodeRequestResult = { status: 'sent'; destination: string } | { status: 'enrol' };

export interface ShopperTokenGrant {
  /** Bearer token for the checkout page's API; kept in the page's memory, never in a cookie. */
  shopperToken: string;
  /** ISO 8601. */
  expiresAt: string;
}

export interface DeviceGrant {
  /** Kept by the checkout page in its own storage (or cookie), partitioned per shop's site by the browser. */
  deviceToken: string;
  /** ISO 8601. */
  expiresAt: string;
}

export interface ShopperIdentity {
  shopperId: string;
  orderId: string;
  /** What signed the shopper in: a one-time code, or a remembered device. */
  proof: SignInProof;
}

export interface EnrolmentIdentity {
  /** The email the new shopper proved, as they typed it. */
  email: string;
  orderId: string;
}

export interface ShopperAuthOptions {
  db: Db;
  keyRing: KeyRing;
  shoppers: ShopperDirectory;
  sender: MessageSender;
  env: WalletEnv;
  log: Logger;
  /** Counters shared by every process (RateLimits): codes sent to each email in a day. */
  limits: Pick<RateLimits, 'hit' | 'giveBack' | 'count'>;
  now?: () => number;
  /**
   * Days a remembered device signs its shopper in (REMEMBER_DEVICE_DAYS), from the code that proved it,
   * not extended by use; undefined: no device is remembered, nor recognized.
   */
  rememberDeviceDays?: number | undefined;
  /** The service's public URL (PUBLIC_URL), for the link in the e-mail about a remembered device. */
  publicUrl?: string;
}

/** A device remembered or forgotten, in the audit trail, in the transaction that did it; its shopper is the subject. */
function recordDeviceEvent(
  trx: Transaction<Database>,
  action: 'device.remembered' | 'device.forgotten',
  shopperId: string,
  actor: Actor,
  details: AuditDetails,
  at: number,
): Promise<unknown> {
  return recordAudit(trx, { actor, action, subject: shopperId, details }, at);
}

/** What the e-mail about a remembered device is composed from (ms since the epoch). */
interface DeviceNoticeFacts {
  shopName: string;
  rememberedAt: number;
  expiresAt: number;
}

/** Where the e-mail about a remembered device sends its shopper to forget every device. */
export const FORGET_DEVICES_PATH = '/checkout/devices/forget';

/**
 * Signs shoppers in to the hosted checkout: a one-time code sent to their email, proved for one order,
 * gives a bearer token bound to that order. New shoppers prove their email the same way before enrolling.
 */
export class ShopperAuth {
  readonly #db: Db;
  /** One per key of the ring, the primary key's first: codes are hashed under it, checked under all. */
  readonly #codeKeys: Buffer[];
  readonly #shoppers: ShopperDirectory;
  readonly #sender: MessageSender;
  readonly #env: WalletEnv;
  readonly #log: Logger;
  readonly #limits: ShopperAuthOptions['limits'];
  readonly #now: () => number;
  /** REMEMBER_DEVICE_DAYS; undefined when `off`. */
  readonly rememberDeviceDays: number | undefined;
  readonly #deviceTtlMs: number | undefined;
  /** One per key of the ring, the primary key's first: links are signed under it, checked under all. */
  readonly #forgetKeys: Buffer[];
  readonly #publicUrl: string | undefined;
  /** E-mails that tell shoppers of a device remembered: `start()` and `stop()` them with the service. */
  readonly notices: ShopperNotices;

  constructor(options: ShopperAuthOptions) {
    this.#db = options.db;
    // Checked under every key: a code sent by a process on the old primary key still works in one that
    // has restarted on the new key during a rotation.
    this.#codeKeys = options.keyRing.keyIds.map((keyId) => options.keyRing.deriveKey('otp', keyId));
    this.#shoppers = options.shoppers;
    this.#sender = options.sender;
    this.#env = options.env;
    this.#log = options.log;
    this.#limits = options.limits;
    this.#now = options.now ?? Date.now;
    this.rememberDeviceDays = options.rememberDeviceDays;
    this.#deviceTtlMs =
      options.rememberDeviceDays === undefined ? undefined : options.rememberDeviceDays * DAY_MS;
    this.#forgetKeys = options.keyRing.keyIds.map((keyId) =>
      options.keyRing.deriveKey('forget-devices', keyId),
    );
    this.#publicUrl = options.publicUrl;
    this.notices = new ShopperNotices({
      db: this.#db,
      sender: this.#sender,
      log: this.#log,
      now: this.#now,
      compose: (notice) => this.#composeNotice(notice),
    });
  }

  /**
   * Sends a code for `orderId` to a known shopper's email. An unknown email gets `{ status: 'enrol' }`
   * and nothing is sent, unless `enrol` is set: a new shopper proves the email before the card is saved.
   * `client` names the asking client for the daily cap per client; requests without one count as one.
   */
  async requestCode(
    orderId: string,
    email: string,
    options: { enrol?: boolean; client?: string } = {},
  ): Promise<CodeRequestResult> {
    const address = checkEmail(email);
    checkOrderId(orderId);
    const normalized = normalizeEmail(address);
    const shopper = await this.#shoppers.findShopperByEmail(normalized);
    if (!shopper && !options.enrol) return { status: 'enrol' };

    const now = this.#now();
    const client = options.client ?? UNKNOWN_CLIENT;
    const testShopper = this.#isTestShopper(normalized);
    // The test shopper's code never changes, so throttling it guards nothing and would only make
    // checkouts in end-to-end tests, which sign it in many times a minute, wait.
    if (!testShopper) {
      const send = await repo.claimSend(this.#db.kysely, normalized, now, RESEND_GAP_MS);
      if (!send.claimed) {
        throw new OtpThrottledError(Math.ceil((send.lastSentAt + RESEND_GAP_MS - now) / 1000));
      }
      await this.#countDaily(normalized, client, now);
    }
    const code = testShopper ? TEST_SHOPPER_CODE : newCode();
    const codeHash = hashCode(this.#codeKeys[0] as Buffer, { orderId, email: normalized, code });
    await repo.saveCode(this.#db.kysely, {
      order_id: orderId,
      email_normalized: normalized,
      code_hash: codeHash,
      attempts: 0,
      created_at: now,
      expires_at: now + CODE_TTL_MS,
      used_at: null,
    });
    // To the wallet's own address, not the one typed: two spellings can normalize alike (a Kelvin sign
    // lower-cases to "k"), and the code must reach only the mailbox the wallet was proved with.
    const to = shopper?.email ?? address;
    try {
      await this.#sender.send(codeMessage(to, code));
    } catch (error) {
      await repo.deleteCode(this.#db.kysely, orderId, normalized, codeHash);
      if (!testShopper) {
        await repo.releaseSend(this.#db.kysely, normalized, now);
        await this.#limits.giveBack(dailyKey(normalized, client));
        await this.#limits.giveBack(dailyKey(normalized));
      }
      if (error instanceof DomainError) throw error;
      throw new DomainError('MESSAGE_NOT_SENT', 'The code could not be sent; try again in a moment.', {
        cause: error,
      });
    }
    return { status: 'sent', destination: maskEmail(to) };
  }

  /**
   * Counts a code to `email` against the day of its client and the day of the email; a refusal gives back
   * what it counted and the 30 s gap it claimed, so it does not use up either day. A client that proved
   * the email lately is not held to the email's day, which others may have used up.
   */
  async #countDaily(email: string, client: string, now: number): Promise<void> {
    const refuse = async (wait: number, message: string): Promise<never> => {
      await repo.releaseSend(this.#db.kysely, email, now);
      throw new OtpThrottledError(wait, message);
    };
    const clientWait = await this.#limits.hit(dailyKey(email, client), CODES_PER_DAY_PER_CLIENT, DAY_MS);
    if (clientWait !== undefined) {
      await refuse(
        clientWait,
        `${CODES_PER_DAY_PER_CLIENT} codes to this email were asked for from your network in the last day, the most it may ask for; ask again in ${roughly(clientWait)}.`,
      );
    }
    const wait = await this.#limits.hit(dailyKey(email), CODES_PER_DAY, DAY_MS);
    if (wait !== undefined && (await this.#limits.count(provenKey(email, client))) === 0) {
      await this.#limits.giveBack(dailyKey(email, client));
      await refuse(
        wait,
        `${CODES_PER_DAY} codes were sent to this email in the last day, the most it gets; ask again in ${roughly(wait)}.`,
      );
    }
  }

  /**
   * Proves the code sent for `orderId` to `email` and returns a shopper token bound to that order. The
   * token of an email without a shopper yet only serves `authenticateEnrolment` until `completeEnrolment`.
   */
  async verifyCode(
    orderId: string,
    email: string,
    code: string,
    client: string = UNKNOWN_CLIENT,
  ): Promise<ShopperTokenGrant> {
    const address = checkEmail(email);
    checkOrderId(orderId);
    if (!isCodeShaped(code)) throw new ValidationError('code: must be 6 digits');
    const normalized = normalizeEmail(address);
    const now = this.#now();
    const attempt = await repo.claimAttempt(this.#db.kysely, {
      orderId,
      email: normalized,
      now,
      maxAttempts: MAX_ATTEMPTS,
    });
    if (!attempt) throw await this.#whyNoLiveCode(orderId, normalized, now);
    const codeHash = this.#codeKeys
      .map((key) => hashCode(key, { orderId, email: normalized, code }))
      .find((hash) => sameHash(hash, attempt.code_hash));
    if (codeHash === undefined) {
      const triesLeft = MAX_ATTEMPTS - attempt.attempts;
      if (triesLeft === 0) throw lockedError();
      throw new OtpInvalidError(triesLeft);
    }
    const used = await repo.markCodeUsed(this.#db.kysely, { orderId, email: normalized, codeHash, now });
    if (!used) throw usedError();
    // Addresses that are not one client's (unknown, unreadable) are shared by everyone: never proven.
    if (client !== UNKNOWN_CLIENT && client !== UNREADABLE_CLIENT) {
      await this.#limits.hit(provenKey(normalized, client), Number.MAX_SAFE_INTEGER, PROVEN_CLIENT_MS);
    }

    const shopper = await this.#shoppers.findShopperByEmail(normalized);
    return this.#grant(orderId, address, shopper?.id ?? null, 'code');
  }

  /**
   * A shopper token for `orderId`, for the shopper the remembered device `deviceToken` signs in at
   * `merchantId`'s checkout: no code is asked. The device is looked at again in the token's transaction,
   * whose write holds its row until the token is written, so that "forget every device" or a wallet's
   * deletion running meanwhile either refuses this sign-in or ends it with the others; undefined when the
   * device no longer signs this shopper in there.
   */
  signIn(
    orderId: string,
    shopper: { id: string; email: string },
    device: { deviceToken: string; merchantId: string },
  ): Promise<ShopperTokenGrant | undefined> {
    checkOrderId(orderId);
    return this.#db.kysely.transaction().execute(async (trx) => {
      const row = await repo.useLiveDevice(trx, {
        tokenHash: hashToken(device.deviceToken),
        merchantId: device.merchantId,
        now: this.#now(),
      });
      if (row?.shopper_id !== shopper.id) return undefined;
      return this.#grant(orderId, shopper.email, shopper.id, 'device', trx);
    });
  }

  /**
   * "Remember me on this device", asked by the shopper signing in to `orderId` at `merchantId`'s
   * checkout: a device token that signs them in there for REMEMBER_DEVICE_DAYS, recorded in the audit
   * trail; undefined where devices are not remembered. With `notice`, the shopper is e-mailed of it (see
   * `#composeNotice`), after the answer.
   */
  async rememberDevice(
    shopperId: string,
    checkout: { orderId: string; merchantId: string },
    notice?: { email: string; shopName: string },
  ): Promise<DeviceGrant | undefined> {
    const { orderId, merchantId } = checkout;
    if (this.#deviceTtlMs === undefined) return undefined;
    const deviceToken = newShopperToken();
    const now = this.#now();
    const expiresAt = now + this.#deviceTtlMs;
    const tell = notice && this.#publicUrl !== undefined;
    await this.#db.kysely.transaction().execute(async (trx) => {
      await repo.insertDevice(trx, {
        token_hash: hashToken(deviceToken),
        shopper_id: shopperId,
        merchant_id: merchantId,
        created_at: now,
        expires_at: expiresAt,
        last_used_at: null,
      });
      const details = { orderId, merchantId, expiresAt: new Date(expiresAt).toISOString() };
      await recordDeviceEvent(trx, 'device.remembered', shopperId, shopperActor(shopperId), details, now);
      if (tell) {
        const facts: DeviceNoticeFacts = { shopName: notice.shopName, rememberedAt: now, expiresAt };
        await enqueueNotice(
          trx,
          { shopperId, email: notice.email, kind: 'device_remembered', details: { ...facts } },
          now,
        );
      }
    });
    if (tell) this.notices.wake();
    return { deviceToken, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The e-mail that tells a shopper a device now remembers them, with a link that forgets every device:
   * the one way a shopper whose device was not theirs, or was lost, can stop it. The link is signed when
   * the e-mail is sent, never stored, and lasts as long as the device it tells of can. None once the
   * address is no longer the shopper's: erased (by a process older than the notices, which left them) or
   * changed since.
   */
  async #composeNotice(notice: NoticeRow): Promise<Message | undefined> {
    const shopper = await this.#shoppers.findShopperByEmail(normalizeEmail(notice.email));
    if (!shopper || shopper.id !== notice.shopper_id) return undefined;
    const facts = JSON.parse(notice.details) as DeviceNoticeFacts;
    const token = this.#forgetToken(notice.shopper_id, facts.rememberedAt);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    return {
      to: shopper.email,
      subject: 'A device now remembers you for checkout',
      text: [
        `A browser checking out at ${facts.shopName} was set to remember you on ${day(facts.rememberedAt)}: on it,`,
        `checkouts at that shop open on your wallet without a one-time code until ${day(facts.expiresAt)}. A new`,
        'or changed address still needs a code.',
        '',
        'If this was not you, or the device is not yours, forget every device that remembers you:',
        `${this.#publicUrl}${FORGET_DEVICES_PATH}?token=${token}`,
      ].join('\n'),
    };
  }

  /** `<shopperId>.<issued ms>.<mac>`: good while the devices it is about can be alive. */
  #forgetToken(shopperId: string, issuedAt: number, key = this.#forgetKeys[0] as Buffer): string {
    const mac = createHmac('sha256', key).update(`${shopperId}.${issuedAt}`).digest('base64url');
    return `${shopperId}.${issuedAt}.${mac}`;
  }

  /**
   * The shopper a link to forget every device is for: undefined for a link that is not one of ours, or is
   * older than a device can live. Changes nothing: the link's page asks before it forgets.
   */
  forgetLinkShopper(token: string): string | undefined {
    const [shopperId, issued, mac] = token.split('.');
    const issuedAt = Number(issued);
    if (!shopperId || !mac || !Number.isSafeInteger(issuedAt)) return undefined;
    if (!this.#forgetKeys.some((key) => sameHash(this.#forgetToken(shopperId, issuedAt, key), token))) {
      return undefined;
    }
    return issuedAt + (this.#deviceTtlMs ?? 0) > this.#now() ? shopperId : undefined;
  }

  /**
   * The link's "Forget every device": each device that remembers its shopper forgets them, and the
   * checkouts they signed in end, recorded in the audit trail. Undefined for a link `forgetLinkShopper`
   * refuses; a link used again forgets what was remembered since.
   */
  async forgetDevicesByLink(token: string): Promise<{ forgotten: number } | undefined> {
    const shopperId = this.forgetLinkShopper(token);
    if (shopperId === undefined) return undefined;
    return this.#db.kysely.transaction().execute(async (trx) => {
      const forgotten = await repo.forgetDevicesOf(trx, shopperId);
      const details = {
        reason: 'the shopper, from the e-mail about a remembered device',
        devices: forgotten,
      };
      await recordDeviceEvent(
        trx,
        'device.forgotten',
        shopperId,
        shopperActor(shopperId),
        details,
        this.#now(),
      );
      return { forgotten };
    });
  }

  /**
   * The shopper a live device token remembers at `merchantId`, and until when, its use recorded;
   * undefined when it is not (any more), or was remembered at another merchant's checkout.
   */
  async recognizeDevice(
    deviceToken: string,
    merchantId: string,
  ): Promise<{ shopperId: string; expiresAt: string } | undefined> {
    if (this.#deviceTtlMs === undefined) return undefined;
    const row = await repo.useLiveDevice(this.#db.kysely, {
      tokenHash: hashToken(deviceToken),
      merchantId,
      now: this.#now(),
    });
    return row && { shopperId: row.shopper_id, expiresAt: new Date(row.expires_at).toISOString() };
  }

  /**
   * The device no longer signs anyone in; the audit trail records who made it forget, and why, with the
   * shopper it remembered as the subject. An unknown or expired token changes nothing, nor does, given
   * `merchantId`, a device remembered at another merchant's checkout.
   */
  async forgetDevice(
    deviceToken: string,
    by: { actor: Actor; orderId?: string; reason: string; merchantId?: string },
  ): Promise<void> {
    const { actor, merchantId, ...details } = by;
    await this.#db.kysely.transaction().execute(async (trx) => {
      const shopperId = await repo.deleteDevice(trx, hashToken(deviceToken), merchantId);
      if (shopperId === undefined) return;
      await recordDeviceEvent(trx, 'device.forgotten', shopperId, actor, details, this.#now());
    });
  }

  async #grant(
    orderId: string,
    email: string,
    shopperId: string | null,
    proof: SignInProof,
    executor: Kysely<Database> = this.#db.kysely,
  ): Promise<ShopperTokenGrant> {
    const shopperToken = newShopperToken();
    const now = this.#now();
    const expiresAt = now + SHOPPER_TOKEN_TTL_MS;
    await repo.insertToken(executor, {
      token_hash: hashToken(shopperToken),
      order_id: orderId,
      email,
      shopper_id: shopperId,
      proof,
      created_at: now,
      expires_at: expiresAt,
    });
    return { shopperToken, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** The shopper and order of a live token; undefined for an unknown, expired or enrolment-only token. */
  async authenticate(token: string): Promise<ShopperIdentity | undefined> {
    const row = await repo.findLiveToken(this.#db.kysely, hashToken(token), this.#now());
    if (!row?.shopper_id) return undefined;
    return { shopperId: row.shopper_id, orderId: row.order_id, proof: row.proof };
  }

  /** The proved email and order of a live token whose email has no shopper yet. */
  async authenticateEnrolment(token: string): Promise<EnrolmentIdentity | undefined> {
    const row = await repo.findLiveToken(this.#db.kysely, hashToken(token), this.#now());
    if (!row || row.shopper_id) return undefined;
    return { email: row.email, orderId: row.order_id };
  }

  /** After enrolment created the shopper, the same token signs them in for the rest of the checkout. */
  async completeEnrolment(token: string, shopperId: string): Promise<void> {
    const attached = await repo.attachShopper(this.#db.kysely, {
      tokenHash: hashToken(token),
      shopperId,
      now: this.#now(),
    });
    if (!attached) {
      throw new DomainError('UNAUTHORIZED', 'The shopper token is unknown, expired or already signed in.');
    }
  }

  /** Ends a sign-in: the token no longer authenticates. An unknown or ended one changes nothing. */
  async signOut(token: string): Promise<void> {
    await repo.deleteToken(this.#db.kysely, hashToken(token));
  }

  /** Deletes dead codes, expired tokens and devices, stale throttle entries and day-old sandbox messages. */
  sweep(): Promise<number> {
    const now = this.#now();
    return repo.sweep(this.#db.kysely, {
      codesBefore: now,
      tokensBefore: now,
      sendsBefore: now - RESEND_GAP_MS,
      messagesBefore: now - SANDBOX_MESSAGE_LIFE_MS,
    });
  }

  /** Staging's test shopper, whose code is always TEST_SHOPPER_CODE: neither throttled nor rate-limited. */
  isTestShopper(email: string): boolean {
    return this.#isTestShopper(normalizeEmail(email));
  }

  #isTestShopper(normalizedEmail: string): boolean {
    return this.#env === 'staging' && normalizedEmail === TEST_SHOPPER_EMAIL;
  }

  async #whyNoLiveCode(orderId: string, email: string, now: number): Promise<DomainError> {
    const row = await repo.findCode(this.#db.kysely, orderId, email);
    if (!row || row.used_at !== null) return usedError();
    if (row.attempts >= MAX_ATTEMPTS) return lockedError();
    if (row.expires_at <= now) {
      return new DomainError(
        'OTP_EXPIRED',
        'The code has expired (codes last 10 minutes); ask for a new one.',
      );
    }
    // A new code replaced this one between the two reads: the shopper should try the newest code.
    return new DomainError('OTP_EXPIRED', 'A newer code was sent; enter the newest code.');
  }
}

/**
 * Forgets an erased shopper's sign-ins (`wallet-checkout shopper erase`): its open checkouts' tokens, so
 * they answer 401 from then on, the devices that remember it, the e-mails not yet sent to it, the codes
 * sent to its email and the sandbox's copies of them, and the counts of codes sent to it today, whose keys
 * name the address. Says how many rows went.
 */
export async function forgetSignIns(
  db: Db,
  limits: Pick<RateLimits, 'forget' | 'forgetPrefix'>,
  shopper: { id: string; email: string },
): Promise<number> {
  const email = normalizeEmail(shopper.email);
  await limits.forget(dailyKey(email));
  await limits.forgetPrefix(dailyKey(email, ''));
  return repo.deleteSignIns(db.kysely, { email, shopperId: shopper.id });
}

/** The devices that remember a shopper ("Remember me on this device"), newest first: for `shopper show`. */
export async function rememberedDevices(
  db: Db,
  shopperId: string,
): Promise<{ createdAt: number; expiresAt: number; lastUsedAt: number | null }[]> {
  const rows = await repo.listDevices(db.kysely, shopperId);
  return rows.map((row) => ({
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  }));
}

/** The e-mails waiting to be sent to a shopper, oldest first: for `shopper show`. */
export async function pendingNotices(
  db: Db,
  shopperId: string,
): Promise<
  { kind: string; createdAt: number; attempts: number; nextAttemptAt: number; lastError: string | null }[]
> {
  const rows = await repo.listNotices(db.kysely, shopperId);
  return rows.map((row) => ({
    kind: row.kind,
    createdAt: row.created_at,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
  }));
}

/** Where a code request's client address is not known: all such requests count as one client's. */
const UNKNOWN_CLIENT = 'unknown';

/**
 * The shared counter of codes sent to a (normalized) email, from one client (`clientKey`) or from all.
 * Every client's key starts with `dailyKey(email, '')`, and no email holds a space, so erasure finds
 * them all and no other's.
 */
function dailyKey(email: string, client?: string): string {
  return client === undefined ? `codes:email:${email}` : `codes:client:${email} ${client}`;
}

/** Marks `client` as having proved `email`; under `dailyKey(email, '')`, so erasure finds it too. */
function provenKey(email: string, client: string): string {
  return dailyKey(email, `proven:${client}`);
}

/** A wait in the unit a person reads it in: `40 seconds`, `12 minutes`, `7 hours`. */
function roughly(seconds: number): string {
  const [amount, unit] =
    seconds < 120
      ? [seconds, 'second']
      : seconds < 7_200
        ? [Math.ceil(seconds / 60), 'minute']
        : [Math.ceil(seconds / 3_600), 'hour'];
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

function checkEmail(email: string): string {
  const trimmed = email.trim();
  if (!isEmail(trimmed)) throw new ValidationError('email: must be an email address');
  return trimmed;
}

function checkOrderId(orderId: string): void {
  if (!orderId) throw new ValidationError('orderId: must not be empty');
}

function lockedError(): DomainError {
  return new DomainError('OTP_LOCKED', `The code was tried ${MAX_ATTEMPTS} times; ask for a new code.`);
}

function usedError(): DomainError {
  return new DomainError(
    'OTP_EXPIRED',
    'There is no code to check for this email and order: it was used already or none was sent; ask for a new one.',
  );
}

function codeMessage(to: string, code: string): Message {
  return {
    to,
    subject: 'Your checkout code',
    text: [
      `${code} is your one-time code to check out with Wallet Checkout.`,
      'It works once, within 10 minutes.',
      '',
      'If you did not ask for it, ignore this e-mail: no one can use your wallet without the code.',
    ].join('\n'),
  };
}
