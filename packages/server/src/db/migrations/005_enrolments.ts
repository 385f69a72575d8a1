import type { Kysely } from 'kysely';

/**
 * New shoppers' enrolments waiting for their one-time code (owned by `checkout/`): one per order and
 * email, the details (card number included, never the CVV) as a key-ring envelope.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';

  await db.schema
    .createTable('pending_enrolments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('email_normalized', 'text', (c) => c.notNull())
    .addColumn('details_ciphertext', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('pending_enrolments_order_email', ['order_id', 'email_normalized'])
    .execute();
  await db.schema
    .createIndex('pending_enrolments_expires')
    .on('pending_enrolments')
    .column('expires_at')
    .execute();
}
