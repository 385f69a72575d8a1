import { type Kysely, sql } from 'kysely';

/**
 * Saved cards' stored credentials, one per card and merchant (owned by `wallet/`): the network
 * transaction id of the card's first successful payment at that merchant, which its later payments there
 * name. Card networks agree a stored credential between a card and one merchant, so a merchant's first
 * payment with a card is `initial`, and no merchant is sent or shown another's id.
 *
 * `cards.stored_credentials_identifier`, the one id a card kept from its first payment at any merchant,
 * stays for the previous version (which runs on this database during a rolling upgrade or after a
 * rollback) and is read no more. It is copied here for the merchant it was agreed with, the merchant of
 * the card's first successful order, so that merchant's next payments stay `subsequent` and its
 * `storedCredentialsIdentifier` stays the same; every other merchant's next payment with the card is
 * `initial`.
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
  await copyCardWideIdentifiers(db);
}

/**
 * Each card's one id, for the merchant of the card's first successful order. Orders created in the same
 * millisecond may tie for first: the conflict keeps one of them.
 */
export async function copyCardWideIdentifiers(db: Kysely<unknown>): Promise<void> {
  await sql`
    insert into stored_credentials (card_id, merchant_id, network_transaction_id, created_at)
    select cards.id, orders.merchant_id, cards.stored_credentials_identifier, orders.created_at
    from cards join orders on orders.payment_id = cards.id
    where cards.stored_credentials_identifier is not null and orders.status = 'SUCCEEDED'
      and orders.created_at = (
        select min(earliest.created_at) from orders earliest
        where earliest.payment_id = cards.id and earliest.status = 'SUCCEEDED')
    on conflict (card_id, merchant_id) do nothing`.execute(db);
}
