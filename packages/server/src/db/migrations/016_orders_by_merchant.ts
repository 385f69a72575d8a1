import type { Kysely } from 'kysely';

/** A merchant's orders newest first (`GET /orders`), read a page at a time (owned by `orders/`). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('orders_merchant_created')
    .on('orders')
    .columns(['merchant_id', 'created_at'])
    .execute();
}
