import { sql } from 'kysely';
import { isLoopbackHost } from '../webhooks/url-guard.js';
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

/** How the service's connection reaches PostgreSQL, as the server sees it. */
export interface ConnectionPath {
  ssl: boolean;
  /** The service's address as the server sees it; null over a Unix socket. */
  clientAddress: string | null;
}

/**
 * The warning for a connection that crosses a network in clear: what the service reads and writes there
 * (shoppers' addresses and contact details among it; card data and secrets stay encrypted) could be read
 * on the way. A Unix socket or the loopback address never leaves the machine.
 */
export function transportWarning(path: ConnectionPath): string | undefined {
  if (path.ssl || path.clientAddress === null || isLoopbackHost(path.clientAddress)) return undefined;
  return "PostgreSQL is reached over the network without TLS: shoppers' e-mail addresses, phone numbers and postal addresses, and the rest of what the service reads and writes, cross it in clear (card data and secrets stay encrypted); add sslmode=verify-full to DATABASE_URL";
}

/** How one of the pool's connections reaches PostgreSQL; undefined on SQLite, a file on this machine. */
export async function connectionPath(db: Db): Promise<ConnectionPath | undefined> {
  if (db.engine !== 'postgres') return undefined;
  const { rows } = await sql<{ ssl: boolean | null; client_address: string | null }>`
    select (select ssl from pg_stat_ssl where pid = pg_backend_pid()) as ssl,
           host(inet_client_addr()) as client_address`.execute(db.kysely);
  return { ssl: rows[0]?.ssl === true, clientAddress: rows[0]?.client_address ?? null };
}

/** `transportWarning` of the pool's connections: production says it at start. */
export async function transportWarnings(db: Db): Promise<string[]> {
  const path = await connectionPath(db);
  const warning = path && transportWarning(path);
  return warning ? [warning] : [];
}
