import type { Kysely } from 'kysely';

/**
 * How far the service has copied the audit trail into its log (owned by `audit/`): the last event
 * copied, 0 for none yet.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .alterTable('audit_head')
    .addColumn('logged_seq', engine === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
