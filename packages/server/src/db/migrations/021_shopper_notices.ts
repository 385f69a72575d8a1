import type { Kysely } from 'kysely';

/**
 * E-mails to shoppers that must not be lost nor hold up a checkout (owned by `shopper-auth/`): written in
 * the transaction of what they tell of, sent after it commits, retried on failure, deleted once sent.
 * Only the facts the message is composed from are kept, so its link is never stored.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('shopper_notices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('shopper_id', 'text', (c) => c.notNull().references('shoppers.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', bigint, (c) => c.notNull())
    .addColumn('last_error', 'text')
    .execute();
  await db.schema
    .createIndex('shopper_notices_due')
    .on('shopper_notices')
    .column('next_attempt_at')
    .execute();
  await db.schema.createIndex('shopper_notices_shopper').on('shopper_notices').column('shopper_id').execute();
}
