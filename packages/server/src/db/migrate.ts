import { type Migration, type MigrationResultSet, Migrator } from 'kysely';
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

type EngineMigration = { up(db: Parameters<Migration['up']>[0], engine: Engine): Promise<void> };

/** Every migration, in order. Names are permanent once released. */
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
};

export class MigrationError extends Error {}

/** Applies every pending migration; safe to call from several processes at once (Kysely takes a lock). */
export async function migrate(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: {
      async getMigrations() {
        const entries = Object.entries(MIGRATIONS).map(([name, migration]): [string, Migration] => [
          name,
          { up: (kysely) => migration.up(kysely, db.engine) },
        ]);
        return Object.fromEntries(entries);
      },
    },
  });
  const { error, results }: MigrationResultSet = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} failed: ${(error as Error).message}`);
  }
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
}
