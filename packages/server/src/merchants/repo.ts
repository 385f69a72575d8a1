/**
 * The merchants area's tables: `merchants`, `api_keys`, `webhook_secrets`. All of its SQL is here; the
 * service works with domain objects. JSON columns are text on both engines.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, Db, Engine } from '../db/index.js';
import type { ApiKeysTable, MerchantsTable, WebhookSecretsTable } from '../db/schema.js';
import type { Merchant } from './types.js';

export type MerchantRow = Selectable<MerchantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type WebhookSecretRow = Selectable<WebhookSecretsTable>;

/** The merchant columns an update may change. */
export type MerchantChanges = Partial<Omit<MerchantRow, 'id' | 'created_at' | 'updated_at'>>;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Merchants are frozen: the key cache hands the same object to many requests. */
export function toMerchant(row: MerchantRow): Merchant {
  return deepFreeze({
    id: row.id,
    name: row.name,
    webhookUrl: row.webhook_url,
    allowedOrigins: JSON.parse(row.allowed_origins),
    credentialTypes: JSON.parse(row.credential_types),
    variant: row.variant,
    authorizationMode: row.authorization_mode,
    shippingMethods: JSON.parse(row.shipping_methods),
    taxSettings: JSON.parse(row.tax_settings),
    rememberDevices: Number(row.remember_devices) === 1,
    createdAt: Number(row.created_at),
  });
}

export class MerchantsRepo {
  readonly #kysely: Kysely<Database>;
  readonly #engine: Engine;

  constructor(db: Pick<Db, 'kysely' | 'engine'>) {
    this.#kysely = db.kysely;
    this.#engine = db.engine;
  }

  /** Runs `work` in one transaction, with a repository bound to it and the transaction itself. */
  transaction<T>(work: (repo: MerchantsRepo, trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.#kysely
      .transaction()
      .execute((trx: Transaction<Database>) =>
        work(new MerchantsRepo({ kysely: trx, engine: this.#engine }), trx),
      );
  }

  // --- merchants ---

  async insertMerchant(row: MerchantRow): Promise<void> {
    await this.#kysely.insertInto('merchants').values(row).execute();
  }

  async findMerchant(id: string): Promise<MerchantRow | undefined> {
    return this.#kysely.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * True when the merchant exists. In a transaction on PostgreSQL it also locks the row, so that work on
   * one merchant (secret rotation) runs one at a time across processes; SQLite serializes writers anyway.
   */
  async lockMerchant(id: string): Promise<boolean> {
    const row = await this.#kysely
      .selectFrom('merchants')
      .select('id')
      .where('id', '=', id)
      .$if(this.#engine === 'postgres', (query) => query.forUpdate())
      .executeTakeFirst();
    return row !== undefined;
  }

  async listMerchants(): Promise<MerchantRow[]> {
    return this.#kysely.selectFrom('merchants').selectAll().orderBy('created_at').orderBy('id').execute();
  }

  async updateMerchant(
    id: string,
    changes: MerchantChanges,
    updatedAt: number,
  ): Promise<MerchantRow | undefined> {
    return this.#kysely
      .updateTable('merchants')
      .set({ ...changes, updated_at: updatedAt })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  // --- API keys ---

  async insertApiKey(row: ApiKeyRow): Promise<void> {
    await this.#kysely.insertInto('api_keys').values(row).execute();
  }

  async listApiKeys(merchantId: string): Promise<ApiKeyRow[]> {
    return this.#kysely
      .selectFrom('api_keys')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** Revokes the key with this id or this hash; a key revoked before keeps its time. */
  async revokeApiKey(
    key: { id: string } | { hash: string },
    at: number,
  ): Promise<{ row: ApiKeyRow; revokedNow: boolean } | undefined> {
    const [column, value] = 'id' in key ? (['id', key.id] as const) : (['hash', key.hash] as const);
    const revoked = await this.#kysely
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where(column, '=', value)
      .where('revoked_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (revoked) return { row: revoked, revokedNow: true };
    const row = await this.#kysely
      .selectFrom('api_keys')
      .selectAll()
      .where(column, '=', value)
      .executeTakeFirst();
    return row && { row, revokedNow: false };
  }

  /** Records that the key was used `at`, unless a later use is recorded (by a process whose clock is ahead). */
  async recordApiKeyUse(id: string, at: number): Promise<void> {
    await this.#kysely
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
      .execute();
  }

  /** The key with this hash and its merchant, in one indexed look-up (the hash column is unique). */
  async findByKeyHash(
    hash: string,
  ): Promise<{ merchant: MerchantRow; keyId: string; revokedAt: number | null } | undefined> {
    const row = await this.#kysely
      .selectFrom('api_keys')
      .innerJoin('merchants', 'merchants.id', 'api_keys.merchant_id')
      .selectAll('merchants')
      .select(['api_keys.id as key_id', 'api_keys.revoked_at as key_revoked_at'])
      .where('api_keys.hash', '=', hash)
      .executeTakeFirst();
    if (!row) return undefined;
    const { key_id, key_revoked_at, ...merchant } = row;
    return { merchant, keyId: key_id, revokedAt: key_revoked_at };
  }

  // --- webhook secrets ---

  async insertWebhookSecret(row: WebhookSecretRow): Promise<void> {
    await this.#kysely.insertInto('webhook_secrets').values(row).execute();
  }

  /** Makes every secret still valid after `until` expire at `until` (the current one included). */
  async expireWebhookSecrets(merchantId: string, until: number): Promise<void> {
    await this.#kysely
      .updateTable('webhook_secrets')
      .set({ expires_at: until })
      .where('merchant_id', '=', merchantId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', until)]))
      .execute();
  }

  async deleteExpiredWebhookSecrets(merchantId: string, now: number): Promise<void> {
    await this.#kysely
      .deleteFrom('webhook_secrets')
      .where('merchant_id', '=', merchantId)
      .where('expires_at', '<=', now)
      .execute();
  }

  /** Secrets that still sign at `now`: the current one (no expiry) first, then newest to oldest. */
  async activeWebhookSecrets(merchantId: string, now: number): Promise<WebhookSecretRow[]> {
    return (
      this.#kysely
        .selectFrom('webhook_secrets')
        .selectAll()
        .where('merchant_id', '=', merchantId)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .orderBy((eb) => eb.case().when('expires_at', 'is', null).then(0).else(1).end())
        // A newer secret never expires before an older one (rotation caps them), and clocks may tie.
        .orderBy('expires_at', 'desc')
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute()
    );
  }
}
