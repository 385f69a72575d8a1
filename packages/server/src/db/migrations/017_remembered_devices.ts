import type { Kysely } from 'kysely';

/**
 * "Remember me on this device" (owned by `shopper-auth/`): a device token, stored as its SHA-256, signs
 * its shopper in to a later checkout without a one-time code until it expires or is forgotten.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('remembered_devices')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('shopper_id', 'text', (c) => c.notNull().references('shoppers.id'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('last_used_at', bigint)
    .execute();
  await db.schema
    .createIndex('remembered_devices_shopper')
    .on('remembered_devices')
    .column('shopper_id')
    .execute();
  await db.schema
    .createIndex('remembered_devices_expires')
    .on('remembered_devices')
    .column('expires_at')
    .execute();
}
