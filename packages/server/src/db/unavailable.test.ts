/**
 * A unit test of the classifier on plain error objects shaped as pg, pg-pool, Node and better-sqlite3
 * throw them (codes and messages as seen from the real drivers); the HTTP tests in
 * api/database-unavailable.test.ts make the real errors.
 */
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './unavailable.js';

const withCode = (code: string, message = 'driver text') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable (unit, plain error objects)', () => {
  it.each([
    ['08006', 'connection failure'],
    ['08001', 'cannot establish a connection'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'crash shutdown'],
    ['57P03', 'the database system is starting up'],
    ['53300', 'too many connections for role "wallet"'],
    ['53100', 'could not extend file: No space left on device'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'],
    ['ECONNRESET', 'read ECONNRESET'],
    ['ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.5:5432'],
    ['EPIPE', 'write EPIPE'],
    ['ENOTFOUND', 'getaddrinfo ENOTFOUND db.internal'],
    ['EAI_AGAIN', 'getaddrinfo EAI_AGAIN db.internal'],
    ['SQLITE_BUSY', 'database is locked'],
    ['SQLITE_BUSY_SNAPSHOT', 'database is locked'],
    ['SQLITE_LOCKED', 'database table is locked'],
    ['SQLITE_IOERR_FSYNC', 'disk I/O error'],
    ['SQLITE_CANTOPEN', 'unable to open database file'],
    ['SQLITE_FULL', 'database or disk is full'],
    ['SQLITE_READONLY_DBMOVED', 'attempt to write a readonly database'],
    ['EIO', 'EIO: i/o error, fdatasync'],
    ['ENOSPC', 'ENOSPC: no space left on device, fdatasync'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"],
  ])('%s (%s) means the database is unavailable', (code, message) => {
    expect(isDatabaseUnavailable(withCode(code, message))).toBe(true);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Client has encountered a connection error and is not queryable',
    'timeout exceeded when trying to connect',
    'The server does not support SSL connections',
  ])('pg and pg-pool\'s "%s", which has no code, means it too', (message) => {
    expect(isDatabaseUnavailable(new Error(message))).toBe(true);
  });

  it("follows causes: pg-pool's connection time-out carries the socket's error", () => {
    const cause = withCode('ECONNRESET');
    expect(isDatabaseUnavailable(new Error('could not save', { cause }))).toBe(true);
  });

  it.each([
    ['42P01', 'relation "nope" does not exist'],
    ['23505', 'duplicate key value violates unique constraint'],
    ['22012', 'division by zero'],
    ['40001', 'could not serialize access'],
    ['55000', 'database "x" is not currently accepting connections'],
    ['SQLITE_ERROR', 'no such table: nope'],
    ['SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed'],
    ['SQLITE_CORRUPT', 'database disk image is malformed'],
    ['ERR_INVALID_ARG_TYPE', 'bad argument'],
  ])('%s (%s) is a bug or a bad query, not an outage', (code, message) => {
    expect(isDatabaseUnavailable(withCode(code, message))).toBe(false);
  });

  it('a plain error, a TypeError and a non-error are not outages', () => {
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly, said the gateway'))).toBe(
      false,
    );
    expect(isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(
      false,
    );
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });
});
