import type { Kysely } from 'kysely';

/**
 * What proved a shopper token (owned by `shopper-auth/`): `code`, a one-time code, or `device`, a
 * remembered device. Deleting the wallet takes a code. Added with a default, so that the previous
 * version's processes keep signing shoppers in beside it during a rolling upgrade.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('shopper_tokens')
    .addColumn('proof', 'text', (c) => c.notNull().defaultTo('code'))
    .execute();
}
