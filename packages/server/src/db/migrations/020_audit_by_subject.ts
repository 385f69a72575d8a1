import type { Kysely } from 'kysely';

/**
 * The audit trail read by what was acted on (`audit list --subject`, `shopper show`): a shopper's wallet
 * changes and devices, a key, a message.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('audit_events_subject')
    .on('audit_events')
    .columns(['subject', 'seq'])
    .execute();
}
