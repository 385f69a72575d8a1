/**
 * Merchants' gateway accounts: which gateway a merchant pays through, with which settings, and its
 * credentials there (a key-ring envelope, associated data the merchant id). The only table read or
 * written here is `gateway_accounts` (migration `004_gateway_accounts`).
 */
import { type Actor, recordAudit } from '../audit/index.js';
import type { WalletEnv } from '../config.js';
import type { Db } from '../db/index.js';
import { ValidationError } from '../errors.js';
import { Secret } from '../secret.js';
import type { KeyRing } from '../vault/keyring.js';
import { GatewayError } from './errors.js';
import type { GatewayConnector, GatewayCredentials } from './gateway.js';
import { connectorFor, type GatewaySettings, parseGatewaySettings } from './registry.js';

/**
 * 10 s per try: a shopper waits on the pay button for the whole authorization, at most 20 s with the
 * one retry after a time-out (`retry.ts`).
 */
export const DEFAULT_SANDBOX_TIMEOUT_MS = 10_000;

export interface GatewayAccount {
  merchantId: string;
  settings: GatewaySettings;
  /** The names of the stored credentials, such as `apiKey`; their values are only given to connectors. */
  credentialNames: string[];
  createdAt: number;
  updatedAt: number;
}

export interface GatewayAccountsOptions {
  db: Db;
  keyRing: KeyRing;
  env: WalletEnv;
  /** Staging: the gateway of merchants without an account (JSON style). */
  sandboxGatewayUrl: string;
  now?: () => number;
}

/** The connector to authorize with and the credentials to give it, for one payment. */
export interface MerchantGateway {
  connector: GatewayConnector;
  credentials: GatewayCredentials;
  /** How long the connector waits for one answer; an authorization may take twice this (`retry.ts`). */
  timeoutMs: number;
}

export class GatewayAccounts {
  readonly #db: Db;
  readonly #keyRing: KeyRing;
  readonly #env: WalletEnv;
  readonly #sandboxGatewayUrl: string;
  readonly #now: () => number;

  constructor(options: GatewayAccountsOptions) {
    this.#db = options.db;
    this.#keyRing = options.keyRing;
    this.#env = options.env;
    this.#sandboxGatewayUrl = options.sandboxGatewayUrl;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Creates or replaces the merchant's account. Settings the registry would not build a connector from
   * (the sandbox gateway in production, a bad URL or time-out) are a ValidationError.
   */
  async set(
    merchantId: string,
    settings: unknown,
    credentials: Record<string, string>,
    by: Actor,
  ): Promise<GatewayAccount> {
    let parsed: GatewaySettings;
    try {
      parsed = parseGatewaySettings(settings);
      connectorFor(parsed, this.#env);
    } catch (error) {
      if (error instanceof GatewayError) throw new ValidationError(`settings: ${error.message}`);
      throw error;
    }
    const now = this.#now();
    const row = {
      merchant_id: merchantId,
      settings: JSON.stringify(parsed),
      credentials_ciphertext: this.#keyRing.seal(
        JSON.stringify(credentials),
        'gateway_accounts.credentials_ciphertext',
        merchantId,
      ),
      created_at: now,
      updated_at: now,
    };
    await this.#db.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('gateway_accounts')
        .values(row)
        .onConflict((conflict) =>
          conflict.column('merchant_id').doUpdateSet({
            settings: row.settings,
            credentials_ciphertext: row.credentials_ciphertext,
            updated_at: now,
          }),
        )
        .execute();
      const details = { gateway: parsed.gateway, credentialNames: Object.keys(credentials) };
      await recordAudit(trx, { actor: by, action: 'gateway_account.set', merchantId, details }, now);
    });
    const account = await this.find(merchantId);
    if (!account) throw new Error(`gateway account of ${merchantId} vanished while being saved`);
    return account;
  }

  async find(merchantId: string): Promise<GatewayAccount | undefined> {
    const row = await this.#db.kysely
      .selectFrom('gateway_accounts')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst();
    return (
      row && {
        merchantId: row.merchant_id,
        settings: parseGatewaySettings(JSON.parse(row.settings)),
        credentialNames: Object.keys(this.#credentialsOf(merchantId, row.credentials_ciphertext)),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      }
    );
  }

  /** Deletes the merchant's account; false when it had none. */
  async remove(merchantId: string, by: Actor): Promise<boolean> {
    return this.#db.kysely.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom('gateway_accounts')
        .where('merchant_id', '=', merchantId)
        .executeTakeFirst();
      const removed = Number(result.numDeletedRows) > 0;
      if (removed) {
        await recordAudit(trx, { actor: by, action: 'gateway_account.removed', merchantId }, this.#now());
      }
      return removed;
    });
  }

  /**
   * The merchant's connector and credentials. In staging a merchant without an account pays through
   * the sandbox gateway at `SANDBOX_GATEWAY_URL`; in production it has none, and the registry refuses
   * the sandbox there: both are a `configuration` GatewayError, which the payment step logs and reports
   * as `-1`.
   */
  async gatewayOf(merchantId: string): Promise<MerchantGateway> {
    const row = await this.#db.kysely
      .selectFrom('gateway_accounts')
      .select(['settings', 'credentials_ciphertext'])
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst();
    if (!row) {
      if (this.#env === 'production') {
        throw new GatewayError(
          'configuration',
          `merchant ${merchantId} has no gateway account, and production does not fall back to the sandbox gateway; set one with "wallet-checkout gateway set"`,
        );
      }
      return {
        connector: connectorFor(
          {
            gateway: 'sandbox',
            style: 'json',
            url: this.#sandboxGatewayUrl,
            timeoutMs: DEFAULT_SANDBOX_TIMEOUT_MS,
          },
          this.#env,
        ),
        // The sandbox accepts any key; one per merchant keeps their idempotency keys apart.
        credentials: { apiKey: new Secret(`sk_sandbox_${merchantId}`) },
        timeoutMs: DEFAULT_SANDBOX_TIMEOUT_MS,
      };
    }
    const settings = parseGatewaySettings(JSON.parse(row.settings));
    const connector = connectorFor(settings, this.#env);
    const credentials = Object.fromEntries(
      Object.entries(this.#credentialsOf(merchantId, row.credentials_ciphertext)).map(([name, value]) => [
        name,
        new Secret(value),
      ]),
    );
    return { connector, credentials, timeoutMs: settings.timeoutMs };
  }

  #credentialsOf(merchantId: string, ciphertext: string): Record<string, string> {
    return JSON.parse(
      this.#keyRing.open(ciphertext, 'gateway_accounts.credentials_ciphertext', merchantId),
    ) as Record<string, string>;
  }
}
