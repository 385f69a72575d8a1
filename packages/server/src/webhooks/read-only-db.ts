import { createDb, type Db } from '../db/index.js';

/**
 * A handle on the service's database that refuses writes (SQLite `query_only`, PostgreSQL read-only
 * transactions), for the delivery worker: the main thread stays the one writer.
 */
export async function openReadOnlyDb(
  databaseUrl: string,
  options: { poolSize: number; onIdleError(error: Error): void },
): Promise<Db> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = createDb(databaseUrl);
    await db.run('pragma query_only = on', []);
    return db;
  }
  // Set for every connection of the pool as it opens, before any query.
  const url = new URL(databaseUrl);
  const given = url.searchParams.get('options');
  url.searchParams.set('options', `${given ? `${given} ` : ''}-c default_transaction_read_only=on`);
  return createDb(url.toString(), options);
}
