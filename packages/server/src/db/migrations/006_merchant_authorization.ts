import type { Kysely } from 'kysely';

/**
 * Orders paid in the merchant's own authorization mode (owned by `orders/`): the payment-carousel session
 * handed to the merchant's page with the shopper's selection, and a summary of the processor response the
 * merchant later reported with `POST /payments/externalresponse` (JSON, no raw response: that stays with
 * the credentials flow, encrypted).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('orders').addColumn('session_id', 'text').execute();
  await db.schema.alterTable('orders').addColumn('external_response', 'text').execute();
  await db.schema
    .createIndex('orders_merchant_session')
    .on('orders')
    .columns(['merchant_id', 'session_id'])
    .execute();
}
