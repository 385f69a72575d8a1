import type { Kysely } from 'kysely';

/**
 * When a shopper removed an address from the wallet (owned by `wallet/`). The row stays: cards and orders
 * refer to it.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .alterTable('addresses')
    .addColumn('removed_at', engine === 'postgres' ? 'bigint' : 'integer')
    .execute();
}
