/**
 * Key rotation: re-encrypts every envelope column under the key ring's primary key.
 *
 * Associated data (AAD) conventions. Every writer of an envelope column MUST seal it with the associated
 * data below, or neither its reader nor this rotation can open it:
 *
 * | column                                           | associated data           |
 * |--------------------------------------------------|---------------------------|
 * | `vault_cards.pan_ciphertext`                     | the row's `id` (vault id) |
 * | `network_tokens.token_ciphertext`                | the row's `vault_id`      |
 * | `webhook_secrets.secret_ciphertext`              | the row's `merchant_id`   |
 * | `external_responses.psp_raw_response_ciphertext` | the row's `id`            |
 * | `orders.transaction_details_ciphertext` (nullable) | the row's `id` (order id) |
 * | `gateway_accounts.credentials_ciphertext`        | the row's `merchant_id`   |
 * | `pending_enrolments.details_ciphertext`          | the row's `id`            |
 *
 * A new envelope column is added to `ENVELOPE_COLUMNS` below with its convention.
 *
 * `vault_cards.pan_hmac` is keyed by a key derived from the primary key, so it is recomputed for every
 * card whose hash differs from the current one. A card stored by a process already on the new key before
 * this run finishes may duplicate an older entry; after the run both carry the same hash and look-ups
 * take the oldest.
 */
import { type Kysely, sql } from 'kysely';
import type { Database, Db } from '../db/index.js';
import type { KeyRing } from './keyring.js';

/** Rows per transaction: short enough not to hold a writer lock for long. */
const BATCH_SIZE = 200;

interface EnvelopeColumn {
  table: keyof Database;
  /** Primary key column, used to walk the table in order. */
  key: string;
  column: string;
  associatedData: string;
}

const ENVELOPE_COLUMNS: EnvelopeColumn[] = [
  { table: 'network_tokens', key: 'vault_id', column: 'token_ciphertext', associatedData: 'vault_id' },
  { table: 'webhook_secrets', key: 'id', column: 'secret_ciphertext', associatedData: 'merchant_id' },
  {
    table: 'external_responses',
    key: 'id',
    column: 'psp_raw_response_ciphertext',
    associatedData: 'id',
  },
  { table: 'orders', key: 'id', column: 'transaction_details_ciphertext', associatedData: 'id' },
  {
    table: 'gateway_accounts',
    key: 'merchant_id',
    column: 'credentials_ciphertext',
    associatedData: 'merchant_id',
  },
  { table: 'pending_enrolments', key: 'id', column: 'details_ciphertext', associatedData: 'id' },
];

function open(keyRing: KeyRing, envelope: string, associatedData: string, where: string): string {
  try {
    return keyRing.decrypt(envelope, associatedData);
  } catch (error) {
    throw new Error(`cannot decrypt ${where}: ${(error as Error).message}`, { cause: error });
  }
}

/** Re-encrypts the vault's card numbers and recomputes their keyed hashes. */
async function rotateVaultCards(db: Kysely<Database>, keyRing: KeyRing): Promise<number> {
  let reencrypted = 0;
  let after = '';
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('vault_cards')
        .select(['id', 'pan_ciphertext', 'pan_hmac'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(BATCH_SIZE)
        .execute();
      for (const row of rows) {
        const pan = open(keyRing, row.pan_ciphertext, row.id, `vault_cards ${row.id}`);
        const stale = keyRing.keyIdOf(row.pan_ciphertext) !== keyRing.primaryKeyId;
        const panHmac = keyRing.hmac(pan);
        if (!stale && panHmac === row.pan_hmac) continue;
        const result = await trx
          .updateTable('vault_cards')
          .set({
            pan_ciphertext: stale ? keyRing.encrypt(pan, row.id) : row.pan_ciphertext,
            pan_hmac: panHmac,
          })
          .where('id', '=', row.id)
          .where('pan_ciphertext', '=', row.pan_ciphertext)
          .executeTakeFirst();
        if (stale) reencrypted += Number(result.numUpdatedRows);
      }
      return rows;
    });
    const last = batch.at(-1);
    if (!last) return reencrypted;
    after = last.id;
  }
}

/** Re-encrypts one envelope column; the update only applies if the row still holds what was read. */
async function rotateColumn(db: Kysely<Database>, keyRing: KeyRing, spec: EnvelopeColumn): Promise<number> {
  const table = sql.table(spec.table);
  const key = sql.ref(spec.key);
  const column = sql.ref(spec.column);
  const aad = sql.ref(spec.associatedData);
  let reencrypted = 0;
  let after = '';
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ row_key: string; envelope: string | null; aad: string }>`
        select ${key} as row_key, ${column} as envelope, ${aad} as aad from ${table}
        where ${key} > ${after} order by ${key} limit ${BATCH_SIZE}`.execute(trx);
      for (const row of rows) {
        // Nullable columns (an order not paid yet) have nothing to re-encrypt.
        if (row.envelope === null || keyRing.keyIdOf(row.envelope) === keyRing.primaryKeyId) continue;
        const plaintext = open(keyRing, row.envelope, row.aad, `${spec.table}.${spec.column} ${row.row_key}`);
        const result = await sql`update ${table} set ${column} = ${keyRing.encrypt(plaintext, row.aad)}
          where ${key} = ${row.row_key} and ${column} = ${row.envelope}`.execute(trx);
        reencrypted += Number(result.numAffectedRows ?? 0);
      }
      return rows;
    });
    const last = batch.at(-1);
    if (!last) return reencrypted;
    after = last.row_key;
  }
}

/**
 * Re-encrypts every envelope in the database under `keyRing`'s primary key, in batches of one
 * transaction each; envelopes already under it are left alone. Safe to run again after an interruption.
 */
export async function reencryptAll(db: Db, keyRing: KeyRing): Promise<{ reencrypted: number }> {
  let reencrypted = await rotateVaultCards(db.kysely, keyRing);
  for (const spec of ENVELOPE_COLUMNS) reencrypted += await rotateColumn(db.kysely, keyRing, spec);
  return { reencrypted };
}
