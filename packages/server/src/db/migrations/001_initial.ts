import type { Kysely } from 'kysely';

/**
 * The first schema. Column types are the ones both engines understand: text, integer (int8 on
 * PostgreSQL where values can pass 2^31), and an auto-increment integer key for addresses, whose
 * internal id the interface exposes as an integer `addressId`.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';

  await db.schema
    .createTable('merchants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('allowed_origins', 'text', (c) => c.notNull())
    .addColumn('credential_types', 'text', (c) => c.notNull())
    .addColumn('credentials_approved_at', bigint)
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('authorization_mode', 'text', (c) => c.notNull())
    .addColumn('shipping_methods', 'text', (c) => c.notNull())
    .addColumn('tax_settings', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('revoked_at', bigint)
    .execute();
  await db.schema.createIndex('api_keys_merchant').on('api_keys').column('merchant_id').execute();

  await db.schema
    .createTable('webhook_secrets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint)
    .execute();
  await db.schema
    .createIndex('webhook_secrets_merchant')
    .on('webhook_secrets')
    .column('merchant_id')
    .execute();

  await db.schema
    .createTable('shoppers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_normalized', 'text', (c) => c.notNull().unique())
    .addColumn('phone', 'text')
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('addresses')
    .addColumn('id', engine === 'postgres' ? 'serial' : 'integer', (c) =>
      engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('external_id', 'text', (c) => c.notNull().unique())
    .addColumn('shopper_id', 'text', (c) => c.notNull().references('shoppers.id'))
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('company', 'text')
    .addColumn('address1', 'text', (c) => c.notNull())
    .addColumn('address2', 'text')
    .addColumn('city', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('zip', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('phone_number', 'text')
    .addColumn('is_default_billing', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_default_shipping', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('addresses_shopper').on('addresses').column('shopper_id').execute();

  await db.schema
    .createTable('vault_cards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pan_ciphertext', 'text', (c) => c.notNull())
    .addColumn('pan_hmac', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('vault_cards_hmac').on('vault_cards').column('pan_hmac').execute();

  await db.schema
    .createTable('network_tokens')
    .addColumn('vault_id', 'text', (c) => c.primaryKey().references('vault_cards.id'))
    .addColumn('token_ciphertext', 'text', (c) => c.notNull())
    .addColumn('exp_month', 'integer', (c) => c.notNull())
    .addColumn('exp_year', 'integer', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('cards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('shopper_id', 'text', (c) => c.notNull().references('shoppers.id'))
    .addColumn('vault_id', 'text', (c) => c.notNull().references('vault_cards.id'))
    .addColumn('billing_address_id', 'integer', (c) => c.notNull().references('addresses.id'))
    .addColumn('brand', 'text', (c) => c.notNull())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('exp_month', 'integer', (c) => c.notNull())
    .addColumn('exp_year', 'integer', (c) => c.notNull())
    .addColumn('name_on_card', 'text', (c) => c.notNull())
    .addColumn('nickname', 'text')
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('needs_cvv', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stored_credentials_identifier', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('cards_shopper_vault', ['shopper_id', 'vault_id'])
    .execute();
  await db.schema.createIndex('cards_shopper').on('cards').column('shopper_id').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('shopper_id', 'text', (c) => c.notNull().references('shoppers.id'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', bigint, (c) => c.notNull())
    .addColumn('lease_until', bigint, (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_messages_due')
    .on('webhook_messages')
    .columns(['state', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_messages_merchant')
    .on('webhook_messages')
    .columns(['merchant_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull().references('webhook_messages.id'))
    .addColumn('attempted_at', bigint, (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_attempts_message')
    .on('webhook_attempts')
    .column('message_id')
    .execute();

  await db.schema
    .createTable('credentials_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id'))
    .addColumn('payment_id', 'text', (c) => c.notNull().references('cards.id'))
    .addColumn('amount', bigint, (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('merchant_reference', 'text', (c) => c.notNull())
    .addColumn('webhook_message_id', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('credentials_requests_reference')
    .on('credentials_requests')
    .columns(['merchant_id', 'merchant_reference'])
    .execute();
  await db.schema
    .createIndex('credentials_requests_payment')
    .on('credentials_requests')
    .columns(['merchant_id', 'payment_id'])
    .execute();

  await db.schema
    .createTable('external_responses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('credentials_request_id', 'text', (c) => c.notNull().references('credentials_requests.id'))
    .addColumn('payment_id', 'text', (c) => c.notNull())
    .addColumn('amount', bigint, (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('psp_host_name', 'text', (c) => c.notNull())
    .addColumn('psp_raw_response_ciphertext', 'text', (c) => c.notNull())
    .addColumn('is_recurring', 'integer', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['merchant_id', 'key'])
    .execute();
  await db.schema
    .createIndex('idempotency_keys_expiry')
    .on('idempotency_keys')
    .column('expires_at')
    .execute();
}
