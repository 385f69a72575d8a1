import { type Kysely, sql } from 'kysely';

/** Hash of the chain's start: what the first event's `prev_hash` is. */
const GENESIS_HASH = '0'.repeat(64);

/**
 * The audit trail (owned by `audit/`): one row per action taken on merchants, keys, secrets, gateway
 * accounts, the vault, shoppers' data and webhooks, chained by hash; and the chain's head, one row, which
 * every writer updates first, so that events are numbered one at a time across processes.
 */
export async function up(db: Kysely<unknown>, engine: 'sqlite' | 'postgres'): Promise<void> {
  const bigint = engine === 'postgres' ? 'bigint' : 'integer';
  await db.schema
    .createTable('audit_events')
    .addColumn('seq', bigint, (c) => c.primaryKey())
    .addColumn('at', bigint, (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('merchant_id', 'text')
    .addColumn('subject', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
  await db.schema
    .createIndex('audit_events_merchant')
    .on('audit_events')
    .columns(['merchant_id', 'seq'])
    .execute();
  await db.schema
    .createTable('audit_head')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', bigint, (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into audit_head (id, seq, hash) values (1, 0, ${GENESIS_HASH})`.execute(db);
}
