import type { Kysely } from 'kysely';

/**
 * What a shopper chose in the hosted checkout (owned by `wallet/`), on the payment-carousel session it
 * makes for a merchant that authorizes payments itself: the card, and the total the shopper agreed to.
 * Credentials requests with that session name that card, for at most that amount. Empty for sessions
 * of the merchant's own carousel (any card of the wallet) and for those made before, or by a previous
 * version's process during a rolling upgrade.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('payment_id', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('amount_limit', 'integer').execute();
}
