/**
 * The first contact with the database, at every start and command (the migration): a database that cannot
 * be reached or used ends it with one line naming DATABASE_URL and which database it names.
 */
import { sql } from 'kysely';
import { ConfigError } from '../config.js';
import { scrub } from '../log.js';
import type { Db } from './index.js';
import { causeChain, isDatabaseUnavailable } from './unavailable.js';

/**
 * PostgreSQL SQLSTATEs of a database DATABASE_URL names wrongly: no such database (3D000), an unknown
 * user or a refused password (28000, 28P01), a user without the rights to make the tables (42501).
 */
const ACCESS_CODES = new Set(['3D000', '28000', '28P01', '42501']);

export class DatabaseAccessError extends ConfigError {
  constructor(where: string, reason: string) {
    super('DATABASE_URL', `cannot use ${where}: ${reason}`);
    this.name = 'DatabaseAccessError';
  }
}

/** The error as a DatabaseAccessError when the database could not be reached or used; else undefined. */
export function accessErrorOf(db: Db, error: unknown): DatabaseAccessError | undefined {
  const refused = [...causeChain(error)].some(
    (link) => typeof link.code === 'string' && ACCESS_CODES.has(link.code),
  );
  if (!refused && !isDatabaseUnavailable(error)) return undefined;
  return new DatabaseAccessError(db.where, scrub((error as Error).message));
}

/** Runs `work` on the database, turning a failure to reach or use it into a DatabaseAccessError. */
export async function withAccess<T>(db: Db, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw accessErrorOf(db, error) ?? error;
  }
}

/**
 * Reaches the database once: a start or command that cannot use it then stops before it writes anything
 * else (a staging key ring, a data folder).
 */
export function checkAccess(db: Db): Promise<void> {
  return withAccess(db, async () => {
    await sql`select 1`.execute(db.kysely);
  });
}
