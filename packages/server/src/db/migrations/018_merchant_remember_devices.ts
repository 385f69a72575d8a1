import type { Kysely } from 'kysely';

/**
 * Whether a merchant's checkout offers "Remember me on this device" (owned by `merchants/`): 1, the
 * default, or 0 for a shop that wants a one-time code at every checkout. An added column with a default,
 * so processes of the previous version keep working beside it during a rolling upgrade.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('merchants')
    .addColumn('remember_devices', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}
