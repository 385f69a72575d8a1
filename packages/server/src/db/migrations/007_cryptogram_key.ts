import type { Kysely } from 'kysely';

/**
 * The key a credentials request's cryptogram is derived under (a key ring id, not key material), so that
 * a webhook retried after a key rotation carries the cryptogram of its first attempt. Requests written
 * before this column use the key ring's primary key, as they did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('credentials_requests').addColumn('cryptogram_key_id', 'text').execute();
}
