/**
 * Whether an error means the database cannot be reached or cannot serve for now, rather than a fault in
 * our code or in a query: the API answers those `503 SERVICE_UNAVAILABLE`, to be retried.
 */

import { FLUSH_THREAD_STOPPED } from './sqlite-wal.js';

/**
 * PostgreSQL SQLSTATEs of a server that is down, restarting or out of room, by class or by code: 08
 * connection exception; 53 insufficient resources (disk full, out of memory, too many connections);
 * 57P01-57P03 admin shutdown, crash shutdown, cannot connect now (starting up, shutting down, recovery).
 */
const PG_CLASSES = ['08', '53'];
const PG_CODES = new Set(['57P01', '57P02', '57P03']);
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** Socket errors of a connection to PostgreSQL that could not be made or was lost. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * What pg and pg-pool throw, without a code, for a connection that ended or never opened in time: the
 * server went away mid-query, a query on a client it left unusable, a pool that could not connect.
 */
const PG_MESSAGES = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  // Asked for TLS (`sslmode` in DATABASE_URL), the server offered none.
  'The server does not support SSL connections',
]);

/** Node's TLS errors of a server whose certificate could not be trusted (`sslmode=verify-full`). */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/**
 * better-sqlite3's result codes (extended codes carry the primary one as their prefix): locked by another
 * connection beyond the busy timeout, a failing or full disk, a file that cannot be opened or written.
 */
const SQLITE_CODES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  'SQLITE_READONLY',
];

/** Node's file errors of the WAL's flush to disk, and its thread's stopping unanswered (db/sqlite-wal.ts). */
const FILE_CODES = new Set(['EIO', 'ENOSPC', 'EDQUOT', 'EROFS', FLUSH_THREAD_STOPPED]);

/** Causes followed at most: pg-pool's connection time-out carries the socket's error as its cause. */
const MAX_CAUSES = 3;

export interface ErrorLink {
  code?: unknown;
  message?: unknown;
}

/**
 * The error, then its cause, that one's cause and so on, MAX_CAUSES causes at most: what tells one failure
 * of the database from another (see also api/plugins/errors.ts).
 */
export function* causeChain(error: unknown): Generator<ErrorLink> {
  let current = error;
  for (let depth = 0; depth <= MAX_CAUSES; depth++) {
    if (typeof current !== 'object' || current === null) return;
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

function classifies(error: ErrorLink): boolean {
  const { code, message } = error;
  if (typeof code === 'string') {
    // Node's codes first: some (EPIPE, EROFS) have a SQLSTATE's shape.
    if (SOCKET_CODES.has(code) || FILE_CODES.has(code) || TLS_CODES.has(code)) return true;
    if (code.startsWith('SQLITE_')) {
      return SQLITE_CODES.some((primary) => code === primary || code.startsWith(`${primary}_`));
    }
    if (SQLSTATE.test(code)) return PG_CLASSES.includes(code.slice(0, 2)) || PG_CODES.has(code);
  }
  return typeof message === 'string' && PG_MESSAGES.has(message);
}

export function isDatabaseUnavailable(error: unknown): boolean {
  for (const link of causeChain(error)) if (classifies(link)) return true;
  return false;
}
