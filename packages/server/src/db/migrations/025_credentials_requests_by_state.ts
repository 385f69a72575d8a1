import type { Kysely } from 'kysely';

/**
 * A merchant's messages of one event in one state, newest first (owned by `webhooks/`): the list of
 * credentials requests by state (`GET /payments/credentials?state=FAILED`), whose state is their
 * PAYMENT_CREDENTIALS message's. Without it such a page read every message of the merchant back to the
 * oldest when few are in that state (ACKNOWLEDGED ones, say, among a month of DELIVERED).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_messages_merchant_event_state')
    .on('webhook_messages')
    .columns(['merchant_id', 'event_name', 'state', 'created_at'])
    .execute();
}
