import type { Kysely } from 'kysely';

/** When each API key was last used, to the minute (owned by `merchants/`): `apikey list` shows it. */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('last_used_at', engine === 'postgres' ? 'bigint' : 'integer')
    .execute();
}
