import type { Kysely } from 'kysely';

/**
 * Shopper sign-in for the hosted checkout (owned by `shopper-auth/`): one-time codes, the per-email
 * resend throttle, shopper tokens, and the staging mailbox behind `GET /sandbox/messages`.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';

  await db.schema
    .createTable('one_time_codes')
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('email_normalized', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('used_at', bigint)
    .addPrimaryKeyConstraint('one_time_codes_pk', ['order_id', 'email_normalized'])
    .execute();
  await db.schema.createIndex('one_time_codes_expires').on('one_time_codes').column('expires_at').execute();

  await db.schema
    .createTable('one_time_code_sends')
    .addColumn('email_normalized', 'text', (c) => c.primaryKey())
    .addColumn('last_sent_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('shopper_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('shopper_id', 'text', (c) => c.references('shoppers.id'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('shopper_tokens_expires').on('shopper_tokens').column('expires_at').execute();

  await db.schema
    .createTable('sandbox_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('recipient_normalized', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('sent_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('sandbox_messages_recipient')
    .on('sandbox_messages')
    .columns(['recipient_normalized', 'sent_at'])
    .execute();
  await db.schema.createIndex('sandbox_messages_sent').on('sandbox_messages').column('sent_at').execute();
}
