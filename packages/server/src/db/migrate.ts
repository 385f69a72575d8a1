import { DEFAULT_MIGRATION_TABLE, type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import { withAccess } from './access.js';
import type { Db, Engine } from './index.js';
import * as initial from './migrations/001_initial.js';
import * as orders from './migrations/002_orders.js';
import * as shopperAuth from './migrations/003_shopper_auth.js';
import * as gatewayAccounts from './migrations/004_gateway_accounts.js';
import * as enrolments from './migrations/005_enrolments.js';
import * as merchantAuthorization from './migrations/006_merchant_authorization.js';
import * as cryptogramKey from './migrations/007_cryptogram_key.js';
import * as rateLimits from './migrations/008_rate_limits.js';
import * as externalResponsesRequest from './migrations/009_external_responses_request.js';
import * as apiKeyLastUsed from './migrations/010_api_key_last_used.js';
import * as cardRemoval from './migrations/011_card_removal.js';
import * as vaultErasure from './migrations/012_vault_erasure.js';
import * as addressRemoval from './migrations/013_address_removal.js';
import * as auditTrail from './migrations/014_audit_trail.js';
import * as auditLogCopy from './migrations/015_audit_log_copy.js';
import * as ordersByMerchant from './migrations/016_orders_by_merchant.js';
import * as rememberedDevices from './migrations/017_remembered_devices.js';
import * as merchantRememberDevices from './migrations/018_merchant_remember_devices.js';
import * as signInProof from './migrations/019_sign_in_proof.js';
import * as auditBySubject from './migrations/020_audit_by_subject.js';
import * as shopperNotices from './migrations/021_shopper_notices.js';
import * as deviceMerchant from './migrations/022_device_merchant.js';
import * as sessionSelection from './migrations/023_session_selection.js';
import * as storedCredentials from './migrations/024_stored_credentials.js';
import * as credentialsRequestsByState from './migrations/025_credentials_requests_by_state.js';

type EngineMigration = { up(db: Parameters<Migration['up']>[0], engine: Engine): Promise<void> };

/**
 * Every migration, in order. Names are permanent once released, and each only adds (tables, columns that
 * may be empty, indexes), so that the previous version runs on what the next one migrated (see `migrate`).
 */
const MIGRATIONS: Record<string, EngineMigration> = {
  '001_initial': initial,
  '002_orders': orders,
  '003_shopper_auth': shopperAuth,
  '004_gateway_accounts': gatewayAccounts,
  '005_enrolments': enrolments,
  '006_merchant_authorization': merchantAuthorization,
  '007_cryptogram_key': cryptogramKey,
  '008_rate_limits': rateLimits,
  '009_external_responses_request': externalResponsesRequest,
  '010_api_key_last_used': apiKeyLastUsed,
  '011_card_removal': cardRemoval,
  '012_vault_erasure': vaultErasure,
  '013_address_removal': addressRemoval,
  '014_audit_trail': auditTrail,
  '015_audit_log_copy': auditLogCopy,
  '016_orders_by_merchant': ordersByMerchant,
  '017_remembered_devices': rememberedDevices,
  '018_merchant_remember_devices': merchantRememberDevices,
  '019_sign_in_proof': signInProof,
  '020_audit_by_subject': auditBySubject,
  '021_shopper_notices': shopperNotices,
  '022_device_merchant': deviceMerchant,
  '023_session_selection': sessionSelection,
  '024_stored_credentials': storedCredentials,
  '025_credentials_requests_by_state': credentialsRequestsByState,
};

export class MigrationError extends Error {}

/** The names of the migrations the database records as applied; none before the first migration. */
async function appliedMigrations(db: Db): Promise<string[]> {
  const table = DEFAULT_MIGRATION_TABLE;
  type Found = { found: string | null };
  const exists =
    db.engine === 'sqlite'
      ? sql<Found>`select name as found from sqlite_master where type = 'table' and name = ${table}`
      : sql<Found>`select to_regclass(${table})::text as found`;
  if (!(await exists.execute(db.kysely)).rows[0]?.found) return [];
  const applied = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db.kysely);
  return applied.rows.map((row) => row.name);
}

/**
 * Applies every pending migration; safe to call from several processes at once (Kysely takes a lock on
 * PostgreSQL; on SQLite the whole run is one transaction that begins by taking the write lock).
 *
 * A database a newer version migrated records migrations this version does not have. Every migration
 * only adds (tables, columns that may be empty, indexes), so this version runs on it, and `warn` says so:
 * a process of the previous version can then restart during a rolling upgrade, or serve again after a
 * rollback. A migration this version does not have that sorts before its own last one comes from another
 * line of releases, and is refused.
 */
export function migrate(db: Db, warn?: (message: string) => void): Promise<string[]> {
  return withAccess(db, () => migrateTo(db, warn));
}

/** This version's migrations, as Kysely runs them on `db`'s engine. */
function ownMigrations(db: Db): [string, Migration][] {
  return Object.entries(MIGRATIONS).map(([name, migration]) => [
    name,
    { up: (kysely) => migration.up(kysely, db.engine) },
  ]);
}

/**
 * Applies the migrations up to `last` only, as the version whose last migration it was left the database:
 * for tests of an upgrade, which write what that version wrote and then `migrate` the rest.
 */
export async function migrateUpTo(db: Db, last: string): Promise<string[]> {
  if (!(last in MIGRATIONS)) throw new MigrationError(`there is no migration ${last}`);
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => Object.fromEntries(ownMigrations(db)) },
  });
  const { error, results }: MigrationResultSet = await migrator.migrateTo(last);
  if (error)
    throw new MigrationError(`migrating up to ${last} failed: ${(error as Error).message}`, { cause: error });
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
}

async function migrateTo(db: Db, warn?: (message: string) => void): Promise<string[]> {
  const known = Object.keys(MIGRATIONS).sort();
  const last = known.at(-1) as string;
  const unknown = (await appliedMigrations(db)).filter((name) => !(name in MIGRATIONS));
  const foreign = unknown.filter((name) => name < last);
  if (foreign.length > 0) {
    throw new MigrationError(
      `the database records migrations this version does not have, older than its last (${last}): ${foreign.join(', ')}`,
    );
  }
  if (unknown.length > 0) {
    warn?.(
      `the database was migrated by a newer version (${unknown.join(', ')}); this version runs on it, as migrations only add, until that version replaces it`,
    );
  }
  const migrator = new Migrator({
    db: db.kysely,
    provider: {
      async getMigrations() {
        const entries = ownMigrations(db);
        // Already applied by the newer version: listed so that Kysely finds none missing, never run.
        const newer = unknown.map((name): [string, Migration] => [
          name,
          {
            up: async () => {
              throw new MigrationError(`migration ${name} is not part of this version`);
            },
          },
        ]);
        return Object.fromEntries([...entries, ...newer]);
      },
    },
  });
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    const which = failed === undefined ? 'the migrations' : `migration ${failed}`;
    // The cause tells a database that could not be used (locked, gone) from a migration that is wrong.
    throw new MigrationError(`${which} failed: ${(error as Error).message}`, { cause: error });
  }
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
}
