import type { Kysely } from 'kysely';

/**
 * The merchant at whose checkout a device was remembered (owned by `shopper-auth/`): it signs its shopper
 * in there only, as the shopper was told. Empty for the devices remembered before, which keep signing in
 * at any merchant until they expire, as do those a previous version's process remembers during a rolling
 * upgrade.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('remembered_devices').addColumn('merchant_id', 'text').execute();
}
