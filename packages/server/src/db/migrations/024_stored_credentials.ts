import type { Kysely } from 'kysely';

/**
 * Saved cards' stored credentials, one per card and merchant (owned by `wallet/`): the network
 * transaction id of the card's first successful payment at that merchant, which its later payments there
 * name. Card networks agree a stored credential between a card and one merchant, so a merchant's first
 * payment with a card is `initial`, and no merchant is sent or shown another's id.
 *
 * `cards.stored_credentials_identifier`, the one id a card kept from its first payment at any merchant,
 * stays for the previous version (which runs on this database during a rolling upgrade or after a
 * rollback) and is read no more. It is not copied here: the merchant it was agreed with is not known, so
 * a card's first payment at each merchant after the upgrade is `initial`.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('stored_credentials')
    .addColumn('card_id', 'text', (c) => c.notNull().references('cards.id'))
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('network_transaction_id', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('stored_credentials_pk', ['card_id', 'merchant_id'])
    .execute();
}
