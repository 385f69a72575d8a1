/**
 * The outbox: a domain change that must tell a merchant writes its webhook message in the SAME
 * transaction as the change, so the message exists if and only if the change committed. After the
 * commit the caller hands the rows to `Dispatcher.committed()` for an immediate first attempt.
 *
 * @example
 * const message = newMessage({ merchantId, eventName: 'PAYMENT_CREDENTIALS', subjectId: request.id,
 *   schedule: 'credentials' }, Date.now(), dispatcher.leaseForNew());
 * await db.kysely.transaction().execute(async (trx) => {
 *   await trx.insertInto('credentials_requests').values({ ...request, webhook_message_id: message.id }).execute();
 *   await insertMessages(trx, [message]);
 * });
 * dispatcher.committed([message]);
 */
import type { Kysely } from 'kysely';
import { batchInsert } from '../db/index.js';
import type { Database, WebhookMessagesTable } from '../db/schema.js';
import { newId } from '../ids.js';

export type WebhookMessageRow = WebhookMessagesTable;
export type RetrySchedule = WebhookMessagesTable['schedule'];

export interface NewMessage {
  merchantId: string;
  eventName: string;
  /** Id of the record the payload is built from at delivery time; the payload itself is never stored. */
  subjectId: string;
  schedule: RetrySchedule;
}

/**
 * A row ready to insert. `leaseMs` > 0 means "this process delivers it right after the commit":
 * other dispatchers leave it alone until the lease runs out. 0 lets any dispatcher's poll take it.
 */
export function newMessage(input: NewMessage, now: number, leaseMs: number): WebhookMessageRow {
  return {
    id: newId('webhookMessage'),
    merchant_id: input.merchantId,
    event_name: input.eventName,
    subject_id: input.subjectId,
    state: 'PENDING',
    schedule: input.schedule,
    attempt_count: 0,
    next_attempt_at: now,
    lease_until: now + leaseMs,
    last_error: null,
    created_at: now,
    updated_at: now,
  };
}

/** Pass the caller's transaction, so that the messages commit with its change. */
export const insertMessages: (
  executor: Kysely<Database>,
  rows: readonly WebhookMessageRow[],
) => Promise<void> = batchInsert('webhook_messages', {
  id: true,
  merchant_id: true,
  event_name: true,
  subject_id: true,
  state: true,
  schedule: true,
  attempt_count: true,
  next_attempt_at: true,
  lease_until: true,
  last_error: true,
  created_at: true,
  updated_at: true,
});
