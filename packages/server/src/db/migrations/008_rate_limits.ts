import type { Kysely } from 'kysely';

/**
 * Fixed-window rate-limit counters shared by every process on the database (owned by `rate-limits.ts`):
 * one row per counted key, its count and the end of its window.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('rate_limit_windows')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('ends_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_limit_windows_ends').on('rate_limit_windows').column('ends_at').execute();
}
