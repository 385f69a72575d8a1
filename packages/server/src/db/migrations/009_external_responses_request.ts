import type { Kysely } from 'kysely';

/**
 * External responses by their credentials request: a merchant's look-up of a request reads them, and the
 * retention sweep deletes them with it. Without it, both read the whole table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('external_responses_request')
    .on('external_responses')
    .column('credentials_request_id')
    .execute();
}
