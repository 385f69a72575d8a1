import type { Kysely } from 'kysely';

/**
 * Merchants' gateway accounts (owned by `gateways/`): the settings naming the gateway, and the
 * credentials as a key-ring envelope (associated data: the merchant id). One account per merchant.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';

  await db.schema
    .createTable('gateway_accounts')
    .addColumn('merchant_id', 'text', (c) => c.primaryKey().references('merchants.id'))
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('credentials_ciphertext', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
}
