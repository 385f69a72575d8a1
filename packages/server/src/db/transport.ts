/** Whether the service's connection to PostgreSQL leaves the machine in clear, which production warns of. */
import { sql } from 'kysely';
import { isLoopbackHost } from '../webhooks/url-guard.js';
import type { Db } from './index.js';

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
