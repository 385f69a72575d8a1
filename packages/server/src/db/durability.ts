import { sql } from 'kysely';
import type { Db } from './index.js';

/**
 * PostgreSQL settings under which an acknowledged request could be lost, or the database damaged, in a
 * crash of the server or its machine, each with what to set instead. The service cannot change them (the
 * server's or the role's configuration decides), so it says so at start. SQLite's flush is the service's
 * own (`sqlite-wal.ts`): nothing to check there.
 */
export async function durabilityWarnings(db: Db): Promise<string[]> {
  if (db.engine !== 'postgres') return [];
  const { rows } = await sql<{ synchronous_commit: string; fsync: string; full_page_writes: string }>`
    select current_setting('synchronous_commit') as synchronous_commit,
           current_setting('fsync') as fsync,
           current_setting('full_page_writes') as full_page_writes`.execute(db.kysely);
  const settings = rows[0];
  if (!settings) return [];
  const warnings: string[] = [];
  if (settings.synchronous_commit === 'off') {
    warnings.push(
      'PostgreSQL runs with synchronous_commit=off: it reports commits before they are on disk, so requests acknowledged just before a server crash can be lost; set synchronous_commit=on',
    );
  }
  if (settings.fsync === 'off') {
    warnings.push(
      'PostgreSQL runs with fsync=off: nothing it writes is flushed to disk, and a machine crash can lose acknowledged requests or damage the database; set fsync=on',
    );
  }
  if (settings.full_page_writes === 'off') {
    warnings.push(
      'PostgreSQL runs with full_page_writes=off: a page half-written when the machine crashes can damage the database; set full_page_writes=on',
    );
  }
  return warnings;
}
