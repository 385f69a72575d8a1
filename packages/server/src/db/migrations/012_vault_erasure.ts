import { type Kysely, sql } from 'kysely';

/** An hour, as `vault/erasure.ts` has it when this migration was written. */
const ERASE_AFTER_MS = 60 * 60_000;

/**
 * Erasure of the card numbers no wallet holds any more (owned by `vault/`): when a vault entry was
 * erased; the entries to erase once due, a card having been removed; and the cards by vault entry, to
 * see whether a wallet still holds one. Cards removed before this migration are scheduled as they would
 * have been.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';
  await db.schema.alterTable('vault_cards').addColumn('erased_at', bigint).execute();
  await db.schema
    .createTable('vault_erasures')
    .addColumn('vault_id', 'text', (c) => c.primaryKey().references('vault_cards.id'))
    .addColumn('due_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('vault_erasures_due').on('vault_erasures').column('due_at').execute();
  await db.schema.createIndex('cards_vault').on('cards').column('vault_id').execute();
  await sql`
    insert into vault_erasures (vault_id, due_at)
    select vault_id, max(removed_at) + ${ERASE_AFTER_MS} from cards
    where removed_at is not null group by vault_id`.execute(db);
}
