import type { Kysely } from 'kysely';

/**
 * Orders of the default checkout (owned by `orders/`). The shopper and payment columns stay null until
 * the payment step fills them; transaction details are a key-ring envelope (gateway responses may
 * carry card data).
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';

  await db.schema
    .createTable('orders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('merchant_order_id', 'text')
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('line_items', 'text', (c) => c.notNull())
    .addColumn('subtotal', bigint, (c) => c.notNull())
    .addColumn('total', bigint, (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('email', 'text')
    .addColumn('shopper_id', 'text')
    .addColumn('payment_id', 'text')
    .addColumn('shipping_address_id', 'text')
    .addColumn('billing_address_id', 'text')
    .addColumn('shipping_method', 'text')
    .addColumn('shipping_amount', bigint)
    .addColumn('tax_amount', bigint)
    .addColumn('charged_amount', bigint)
    .addColumn('transaction_details_ciphertext', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('orders_open').on('orders').columns(['status', 'expires_at']).execute();
  await db.schema
    .createIndex('orders_merchant_reference')
    .on('orders')
    .columns(['merchant_id', 'merchant_order_id'])
    .execute();
}
