import type { Kysely } from 'kysely';

/**
 * When a shopper removed a card from the wallet (owned by `wallet/`). The row stays: credentials
 * requests and payments under way refer to it, and typing the number again brings it back.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .alterTable('cards')
    .addColumn('removed_at', engine === 'postgres' ? 'bigint' : 'integer')
    .execute();
}
