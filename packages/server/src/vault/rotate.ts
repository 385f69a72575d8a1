/**
 * Key rotation: re-encrypts every envelope column under the key ring's primary key, and rewrites
 * envelopes of version 1 (bound to the row id alone) as version 2 (bound to column and row).
 *
 * Every writer of an envelope column MUST seal it with `keyRing.seal(value, 'table.column', id)`, the id
 * being the row's column below, or neither its reader nor this rotation can open it:
 *
 * | column                                           | id                        |
 * |--------------------------------------------------|---------------------------|
 * | `vault_cards.pan_ciphertext`                     | the row's `id` (vault id) |
 * | `network_tokens.token_ciphertext`                | the row's `vault_id`      |
 * | `webhook_secrets.secret_ciphertext`              | the row's `merchant_id`   |
 * | `external_responses.psp_raw_response_ciphertext` | the row's `id`            |
 * | `orders.transaction_details_ciphertext` (nullable) | the row's `id` (order id) |
 * | `gateway_accounts.credentials_ciphertext`        | the row's `merchant_id`   |
 * | `pending_enrolments.details_ciphertext`          | the row's `id`            |
 *
 * A new envelope column is added to `SealedColumn` and to `ENVELOPE_COLUMNS` below with its id.
 *
 * `vault_cards.pan_hmac` is keyed by a key derived from the primary key, so it is recomputed for every
 * card whose hash differs from the current one. A card stored by a process already on the new key before
 * this run finishes may duplicate an older entry; after the run both carry the same hash and look-ups
 * take the oldest. An erased entry (vault/erasure.ts) has nothing left to re-encrypt.
 */
import { type Kysely, sql } from 'kysely';
import { ConfigError } from '../config.js';
import type { Database, Db } from '../db/index.js';
import { type KeyRing, type SealedColumn, UnknownKeyError } from './keyring.js';

/** Rows per transaction: short enough not to hold a writer lock for long. */
const BATCH_SIZE = 200;

interface EnvelopeColumn {
  sealed: SealedColumn;
  /** Primary key column, used to walk the table in order. */
  key: string;
  /** The column whose value the envelope is sealed to. */
  id: string;
}

const ENVELOPE_COLUMNS: EnvelopeColumn[] = [
  { sealed: 'network_tokens.token_ciphertext', key: 'vault_id', id: 'vault_id' },
  { sealed: 'webhook_secrets.secret_ciphertext', key: 'id', id: 'merchant_id' },
  { sealed: 'external_responses.psp_raw_response_ciphertext', key: 'id', id: 'id' },
  { sealed: 'orders.transaction_details_ciphertext', key: 'id', id: 'id' },
  { sealed: 'gateway_accounts.credentials_ciphertext', key: 'merchant_id', id: 'merchant_id' },
  { sealed: 'pending_enrolments.details_ciphertext', key: 'id', id: 'id' },
];

function open(keyRing: KeyRing, envelope: string, column: SealedColumn, id: string, where: string): string {
  try {
    return keyRing.open(envelope, column, id);
  } catch (error) {
    const problem = `cannot decrypt ${where}: ${(error as Error).message}`;
    if (error instanceof UnknownKeyError) {
      throw new ConfigError(
        'VAULT_KEYS',
        `${problem}; put it back after the primary key, and run this again`,
      );
    }
    throw new Error(problem, { cause: error });
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
        .where('erased_at', 'is', null)
        .orderBy('id')
        .limit(BATCH_SIZE)
        .execute();
      for (const row of rows) {
        const pan = open(
          keyRing,
          row.pan_ciphertext,
          'vault_cards.pan_ciphertext',
          row.id,
          `vault_cards ${row.id}`,
        );
        const stale = !keyRing.isCurrent(row.pan_ciphertext);
        const panHmac = keyRing.hmac(pan);
        if (!stale && panHmac === row.pan_hmac) continue;
        const result = await trx
          .updateTable('vault_cards')
          .set({
            pan_ciphertext: stale
              ? keyRing.seal(pan, 'vault_cards.pan_ciphertext', row.id)
              : row.pan_ciphertext,
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
  const [tableName, columnName] = spec.sealed.split('.') as [keyof Database, string];
  const table = sql.table(tableName);
  const key = sql.ref(spec.key);
  const column = sql.ref(columnName);
  const id = sql.ref(spec.id);
  let reencrypted = 0;
  let after = '';
  for (;;) {
    const batch = await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ row_key: string; envelope: string | null; id: string }>`
        select ${key} as row_key, ${column} as envelope, ${id} as id from ${table}
        where ${key} > ${after} order by ${key} limit ${BATCH_SIZE}`.execute(trx);
      for (const row of rows) {
        // Nullable columns (an order not paid yet) have nothing to re-encrypt.
        if (row.envelope === null || keyRing.isCurrent(row.envelope)) continue;
        const plaintext = open(keyRing, row.envelope, spec.sealed, row.id, `${spec.sealed} ${row.row_key}`);
        const result =
          await sql`update ${table} set ${column} = ${keyRing.seal(plaintext, spec.sealed, row.id)}
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

/** Rows read from each end of a column by `sampleKeyedValues`. */
const SAMPLE_ROWS = 100;

/** A column that names vault keys: envelopes, with the column they are sealed to, or bare key ids. */
interface KeyedColumn {
  column: string;
  key: string;
  /** For envelopes: the column whose value each is sealed to (see the table above). */
  sealedTo?: string;
}

const KEYED_COLUMNS: KeyedColumn[] = [
  { column: 'vault_cards.pan_ciphertext', key: 'id', sealedTo: 'id' },
  ...ENVELOPE_COLUMNS.map(({ sealed, key, id }): KeyedColumn => ({ column: sealed, key, sealedTo: id })),
  // The key a credentials request's sandbox cryptogram is derived under, needed by its webhook's retries.
  { column: 'credentials_requests.cryptogram_key_id', key: 'id' },
];

/** A stored value that names a key: the key, its column, and for an envelope under a key of the ring, whether that key opens it. */
interface KeyedValue {
  keyId: string;
  column: string;
  opens?: boolean;
}

/**
 * The values naming keys read from the first and last SAMPLE_ROWS rows of every column that names keys,
 * in primary-key order (creation order for prefixed ids, random for the vault's UUIDs), so two index scans
 * a column whatever the table's size. Key ids live only inside the envelopes, and reading every envelope
 * at every start would make a start as slow as the database is large. So it is a sample: a table of up to
 * twice SAMPLE_ROWS rows whole, else its ends, which catches a ring that lacks the key everything was
 * sealed under before a rotation, or holds another key under its id, but may miss the rows a
 * `vault rotate-key` cut short left between the ends.
 */
async function sampleKeyedValues(
  db: Db,
  keyRing: KeyRing,
  options: { envelopesOnly?: boolean },
): Promise<KeyedValue[]> {
  const sampled: KeyedValue[] = [];
  const columns = options.envelopesOnly
    ? KEYED_COLUMNS.filter((c) => c.sealedTo !== undefined)
    : KEYED_COLUMNS;
  for (const { column: qualified, key, sealedTo } of columns) {
    const [tableName, columnName] = qualified.split('.') as [string, string];
    const column = sql.ref(columnName);
    for (const direction of [sql.raw('asc'), sql.raw('desc')]) {
      const { rows } = await sql<{ value: string; sealed_to: string }>`
        select ${column} as value, ${sql.ref(sealedTo ?? key)} as sealed_to from ${sql.table(tableName)}
        where ${column} is not null and ${column} <> '' order by ${sql.ref(key)} ${direction}
        limit ${SAMPLE_ROWS}`.execute(db.kysely);
      for (const { value, sealed_to } of rows) {
        if (sealedTo === undefined) {
          sampled.push({ keyId: value, column: qualified });
          continue;
        }
        const keyId = keyRing.keyIdOf(value);
        if (!keyId) continue;
        const opens = keyRing.keyIds.includes(keyId)
          ? opensWith(keyRing, value, qualified as SealedColumn, sealed_to)
          : undefined;
        sampled.push({ keyId, column: qualified, opens });
      }
    }
  }
  return sampled;
}

function opensWith(keyRing: KeyRing, envelope: string, column: SealedColumn, id: string): boolean {
  try {
    keyRing.open(envelope, column, id);
    return true;
  } catch {
    return false;
  }
}

/** The key ids stored values need, each with a column it was found in (see `sampleKeyedValues`). */
export async function keyIdsInUse(
  db: Db,
  keyRing: KeyRing,
  options: { envelopesOnly?: boolean } = {},
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const { keyId, column } of await sampleKeyedValues(db, keyRing, options)) {
    if (!found.has(keyId)) found.set(keyId, column);
  }
  return found;
}

/**
 * What a ring lacks of the keys stored values are sealed under (see `sampleKeyedValues`), as a rule of
 * VAULT_KEYS for a message; undefined when it lacks none. A key of the ring lacks too when it opens none
 * of the values sealed under its id: another key given that id (a VAULT_KEYS made anew on a second
 * machine, say), under which every read of them would fail and new values would be sealed under a key
 * no other process holds. One that opens some is the right key, whatever altered the others.
 * `envelopesOnly`: of the values a rotation opens, leaving out the keys credentials requests'
 * cryptograms are derived under.
 */
export async function lackingKeys(
  db: Db,
  keyRing: KeyRing,
  options: { envelopesOnly?: boolean } = {},
): Promise<string | undefined> {
  const sampled = await sampleKeyedValues(db, keyRing, options);
  const problems: string[] = [];
  const missing = new Map<string, string>();
  for (const { keyId, column } of sampled) {
    if (!keyRing.keyIds.includes(keyId) && !missing.has(keyId)) missing.set(keyId, column);
  }
  if (missing.size > 0) {
    const keys = [...missing].map(([keyId, column]) => `${keyId} (in ${column})`).join(', ');
    problems.push(
      `lacks keys that stored values are sealed under: ${keys}; put them back after the primary key, run npx wallet-checkout vault rotate-key, and remove them only once it has finished`,
    );
  }
  for (const keyId of keyRing.keyIds) {
    const tried = sampled.filter((value) => value.keyId === keyId && value.opens !== undefined);
    if (tried.length === 0 || tried.some((value) => value.opens)) continue;
    const columns = [...new Set(tried.map((value) => value.column))].join(', ');
    problems.push(
      `key ${keyId} does not open the values sealed under ${keyId} (in ${columns}): it is another key with the same id; set ${keyId} to the key they were sealed with`,
    );
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}
