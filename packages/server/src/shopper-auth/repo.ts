/**
 * The tables this folder owns: one_time_codes, one_time_code_sends, shopper_tokens, remembered_devices,
 * shopper_notices, sandbox_messages.
 */
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import type { Database, Db } from '../db/index.js';
import type {
  OneTimeCodesTable,
  RememberedDevicesTable,
  SandboxMessagesTable,
  ShopperNoticesTable,
  ShopperTokensTable,
} from '../db/schema.js';

type Q = Kysely<Database>;
export type CodeRow = Selectable<OneTimeCodesTable>;
export type TokenRow = Selectable<ShopperTokensTable>;
export type DeviceRow = Selectable<RememberedDevicesTable>;
export type SandboxMessageRow = Selectable<SandboxMessagesTable>;
export type NoticeRow = Selectable<ShopperNoticesTable>;

/**
 * Records a send to `email` at `now` unless the last one was less than `gapMs` ago. One statement, so two
 * requests at the same moment cannot both pass. Returns the last send time when throttled.
 */
export async function claimSend(
  db: Q,
  email: string,
  now: number,
  gapMs: number,
): Promise<{ claimed: true } | { claimed: false; lastSentAt: number }> {
  const claimed = await db
    .insertInto('one_time_code_sends')
    .values({ email_normalized: email, last_sent_at: now })
    .onConflict((conflict) =>
      conflict
        .column('email_normalized')
        .doUpdateSet({ last_sent_at: now })
        .where('one_time_code_sends.last_sent_at', '<=', now - gapMs),
    )
    .returning('email_normalized')
    .executeTakeFirst();
  if (claimed) return { claimed: true };
  const row = await db
    .selectFrom('one_time_code_sends')
    .select('last_sent_at')
    .where('email_normalized', '=', email)
    .executeTakeFirst();
  // The row can only have gone if a sweep removed it in between: then nothing throttles any more.
  return row ? { claimed: false, lastSentAt: row.last_sent_at } : claimSend(db, email, now, gapMs);
}

/** Gives a send back when the message could not be delivered, so the shopper may retry at once. */
export async function releaseSend(db: Q, email: string, sentAt: number): Promise<void> {
  await db
    .deleteFrom('one_time_code_sends')
    .where('email_normalized', '=', email)
    .where('last_sent_at', '=', sentAt)
    .execute();
}

/** Stores a new code for the order and email, replacing any earlier one with its tries. */
export async function saveCode(db: Q, row: CodeRow): Promise<void> {
  await db
    .insertInto('one_time_codes')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['order_id', 'email_normalized']).doUpdateSet({
        code_hash: row.code_hash,
        attempts: row.attempts,
        created_at: row.created_at,
        expires_at: row.expires_at,
        used_at: row.used_at,
      }),
    )
    .execute();
}

export async function deleteCode(db: Q, orderId: string, email: string, codeHash: string): Promise<void> {
  await db
    .deleteFrom('one_time_codes')
    .where('order_id', '=', orderId)
    .where('email_normalized', '=', email)
    .where('code_hash', '=', codeHash)
    .execute();
}

/**
 * Counts one try against a live code and returns its hash, or nothing when the code is used, locked or
 * expired. Counting before comparing, in one statement, means parallel guesses cannot pass the limit.
 */
export function claimAttempt(
  db: Q,
  input: { orderId: string; email: string; now: number; maxAttempts: number },
): Promise<Pick<CodeRow, 'code_hash' | 'attempts'> | undefined> {
  return db
    .updateTable('one_time_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('order_id', '=', input.orderId)
    .where('email_normalized', '=', input.email)
    .where('used_at', 'is', null)
    .where('attempts', '<', input.maxAttempts)
    .where('expires_at', '>', input.now)
    .returning(['code_hash', 'attempts'])
    .executeTakeFirst();
}

export function findCode(db: Q, orderId: string, email: string): Promise<CodeRow | undefined> {
  return db
    .selectFrom('one_time_codes')
    .selectAll()
    .where('order_id', '=', orderId)
    .where('email_normalized', '=', email)
    .executeTakeFirst();
}

/** True for the one caller that uses the code; a second, even a simultaneous one, gets false. */
export async function markCodeUsed(
  db: Q,
  input: { orderId: string; email: string; codeHash: string; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('one_time_codes')
    .set({ used_at: input.now })
    .where('order_id', '=', input.orderId)
    .where('email_normalized', '=', input.email)
    .where('code_hash', '=', input.codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertToken(db: Q, row: TokenRow): Promise<void> {
  await db.insertInto('shopper_tokens').values(row).execute();
}

export function findLiveToken(db: Q, tokenHash: string, now: number): Promise<TokenRow | undefined> {
  return db
    .selectFrom('shopper_tokens')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Deletes one token, live or not; says whether there was one. */
export async function deleteToken(db: Q, tokenHash: string): Promise<boolean> {
  const result = await db.deleteFrom('shopper_tokens').where('token_hash', '=', tokenHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Gives a live enrolment token its new shopper; false when the token is gone or already has one. */
export async function attachShopper(
  db: Q,
  input: { tokenHash: string; shopperId: string; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable('shopper_tokens')
    .set({ shopper_id: input.shopperId })
    .where('token_hash', '=', input.tokenHash)
    .where('shopper_id', 'is', null)
    .where('expires_at', '>', input.now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertDevice(db: Q, row: DeviceRow): Promise<void> {
  await db.insertInto('remembered_devices').values(row).execute();
}

/** A device remembered at `merchantId`'s checkout, or before devices were remembered per merchant (022). */
function rememberedAt(merchantId: string) {
  return (eb: ExpressionBuilder<Database, 'remembered_devices'>) =>
    eb.or([eb('merchant_id', '=', merchantId), eb('merchant_id', 'is', null)]);
}

/**
 * The live device of a token remembered at `merchantId` (or before devices were remembered per merchant),
 * marked used at `now`; undefined for an unknown or expired one, or one of another merchant.
 */
export function useLiveDevice(
  db: Q,
  input: { tokenHash: string; merchantId: string; now: number },
): Promise<DeviceRow | undefined> {
  return db
    .updateTable('remembered_devices')
    .set({ last_used_at: input.now })
    .where('token_hash', '=', input.tokenHash)
    .where('expires_at', '>', input.now)
    .where(rememberedAt(input.merchantId))
    .returningAll()
    .executeTakeFirst();
}

/**
 * Forgets one device, live or not, and with `merchantId` only one remembered there (or before devices
 * were remembered per merchant); the shopper it remembered, if it was known.
 */
export async function deleteDevice(
  db: Q,
  tokenHash: string,
  merchantId?: string,
): Promise<string | undefined> {
  const row = await db
    .deleteFrom('remembered_devices')
    .where('token_hash', '=', tokenHash)
    .$if(merchantId !== undefined, (q) => q.where(rememberedAt(merchantId as string)))
    .returning('shopper_id')
    .executeTakeFirst();
  return row?.shopper_id;
}

/**
 * Forgets every device that remembers the shopper, and ends the checkouts those devices signed in (the
 * tokens a code proved stay). Says how many devices.
 */
export async function forgetDevicesOf(db: Q, shopperId: string): Promise<number> {
  const devices = await db
    .deleteFrom('remembered_devices')
    .where('shopper_id', '=', shopperId)
    .executeTakeFirst();
  await db
    .deleteFrom('shopper_tokens')
    .where('shopper_id', '=', shopperId)
    .where('proof', '=', 'device')
    .execute();
  return Number(devices.numDeletedRows);
}

/** The devices that remember a shopper, newest first, for the shopper's access request. */
export function listDevices(db: Q, shopperId: string): Promise<DeviceRow[]> {
  return db
    .selectFrom('remembered_devices')
    .selectAll()
    .where('shopper_id', '=', shopperId)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function insertSandboxMessage(db: Q, row: SandboxMessageRow): Promise<void> {
  await db.insertInto('sandbox_messages').values(row).execute();
}

export function listSandboxMessages(db: Q, recipient: string, limit: number): Promise<SandboxMessageRow[]> {
  return db
    .selectFrom('sandbox_messages')
    .selectAll()
    .where('recipient_normalized', '=', recipient)
    .orderBy('sent_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Deletes a shopper's sign-ins: the tokens of its open checkouts, the devices that remember it, and the
 * codes, sends and sandbox copies of the messages for its email. Says how many rows.
 */
export async function deleteSignIns(db: Q, input: { email: string; shopperId: string }): Promise<number> {
  // The devices first: a device's sign-in holds its row until its token is written (ShopperAuth.signIn),
  // so once they are gone no token of theirs is still to come, and the tokens' delete gets them all.
  const devices = await db
    .deleteFrom('remembered_devices')
    .where('shopper_id', '=', input.shopperId)
    .executeTakeFirst();
  const results = await Promise.all([
    db.deleteFrom('shopper_tokens').where('shopper_id', '=', input.shopperId).executeTakeFirst(),
    db.deleteFrom('shopper_notices').where('shopper_id', '=', input.shopperId).executeTakeFirst(),
    db.deleteFrom('one_time_codes').where('email_normalized', '=', input.email).executeTakeFirst(),
    db.deleteFrom('one_time_code_sends').where('email_normalized', '=', input.email).executeTakeFirst(),
    db.deleteFrom('sandbox_messages').where('recipient_normalized', '=', input.email).executeTakeFirst(),
  ]);
  return results.reduce(
    (total, result) => total + Number(result.numDeletedRows),
    Number(devices.numDeletedRows),
  );
}

/**
 * Deletes what can no longer be used: dead codes, expired tokens and remembered devices, stale sends and
 * old sandbox messages.
 */
export async function sweep(
  db: Q,
  input: { codesBefore: number; tokensBefore: number; sendsBefore: number; messagesBefore: number },
): Promise<number> {
  const results = await Promise.all([
    db.deleteFrom('one_time_codes').where('expires_at', '<=', input.codesBefore).executeTakeFirst(),
    db.deleteFrom('shopper_tokens').where('expires_at', '<=', input.tokensBefore).executeTakeFirst(),
    db.deleteFrom('remembered_devices').where('expires_at', '<=', input.tokensBefore).executeTakeFirst(),
    db.deleteFrom('one_time_code_sends').where('last_sent_at', '<=', input.sendsBefore).executeTakeFirst(),
    db.deleteFrom('sandbox_messages').where('sent_at', '<=', input.messagesBefore).executeTakeFirst(),
  ]);
  return results.reduce((total, result) => total + Number(result.numDeletedRows), 0);
}

export async function insertNotice(db: Q, row: NoticeRow): Promise<void> {
  await db.insertInto('shopper_notices').values(row).execute();
}

/**
 * Leases up to `limit` due notices, oldest due first, counting the attempt: their next attempt moves to
 * when the lease runs out, so a process that dies while sending leaves them to be sent again then. On
 * PostgreSQL `FOR UPDATE SKIP LOCKED` keeps two processes from taking the same notice; SQLite's single
 * write lock does the same.
 */
export async function claimDueNotices(
  db: Db,
  input: { now: number; leaseUntil: number; limit: number },
): Promise<NoticeRow[]> {
  return db.kysely
    .updateTable('shopper_notices')
    .set((eb) => ({ next_attempt_at: input.leaseUntil, attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', (qb) =>
      qb
        .selectFrom('shopper_notices')
        .select('id')
        .where('next_attempt_at', '<=', input.now)
        .orderBy('next_attempt_at')
        .limit(input.limit)
        .$if(db.engine === 'postgres', (q) => q.forUpdate().skipLocked()),
    )
    .returningAll()
    .execute();
}

export function listNotices(db: Q, shopperId: string): Promise<NoticeRow[]> {
  return db
    .selectFrom('shopper_notices')
    .selectAll()
    .where('shopper_id', '=', shopperId)
    .orderBy('created_at')
    .execute();
}

/**
 * Gives back notices leased and not tried (by a process that is stopping): due at once, the attempt not
 * counted, unless another process has claimed them since.
 */
export async function releaseNotices(
  db: Q,
  input: { ids: string[]; leaseUntil: number; now: number },
): Promise<void> {
  if (input.ids.length === 0) return;
  await db
    .updateTable('shopper_notices')
    .set((eb) => ({ next_attempt_at: input.now, attempts: eb('attempts', '-', 1) }))
    .where('id', 'in', input.ids)
    .where('next_attempt_at', '=', input.leaseUntil)
    .execute();
}

/** A sent or abandoned notice is deleted: the address and the facts in it are no longer needed. */
export async function deleteNotice(db: Q, id: string): Promise<void> {
  await db.deleteFrom('shopper_notices').where('id', '=', id).execute();
}

/** After a failed attempt: the next one at `nextAttemptAt`, unless another process has claimed it since. */
export async function rescheduleNotice(
  db: Q,
  input: { id: string; leaseUntil: number; nextAttemptAt: number; lastError: string },
): Promise<void> {
  await db
    .updateTable('shopper_notices')
    .set({ next_attempt_at: input.nextAttemptAt, last_error: input.lastError })
    .where('id', '=', input.id)
    .where('next_attempt_at', '=', input.leaseUntil)
    .execute();
}
