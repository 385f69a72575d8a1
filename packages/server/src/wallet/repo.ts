/**
 * The wallet's tables (`shoppers`, `addresses`, `cards`, `stored_credentials`, `sessions`) and their
 * mapping to domain types.
 * Every function takes the Kysely instance to run on, so a service can pass a transaction.
 */
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { type Database, type Db, type Engine, prepared } from '../db/index.js';
import type {
  AddressesTable,
  CardsTable,
  SessionsTable,
  ShoppersTable,
  StoredCredentialsTable,
} from '../db/schema.js';
import { DomainError } from '../errors.js';
import type { Address, Card, Session, Shopper } from './types.js';

export type Q = Kysely<Database>;

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : S;

/** The columns of `Row` but `Omitted`, under camelCase names, the `Flags` columns as booleans. */
type Mapped<Row, Flags extends keyof Row, Omitted extends keyof Row> = {
  [Column in Exclude<keyof Row, Omitted> & string as Camel<Column>]: Column extends Flags
    ? boolean
    : Row[Column];
};

/**
 * The one row mapper of the wallet's tables: each column under its camelCase name (`exp_month` →
 * `expMonth`), the 0/1 `flags` as booleans, and the `omit`ted bookkeeping columns the domain type
 * does not carry left out. The names are worked out from the first row (every row of a table has the
 * same columns), not per row: cards and sessions are read on every credentials request.
 */
function rowMapper<
  Row extends object,
  Flags extends keyof Row & string = never,
  Omitted extends keyof Row & string = never,
>(
  columns: { flags?: readonly Flags[]; omit?: readonly Omitted[] } = {},
): (row: Row) => Mapped<Row, Flags, Omitted> {
  const flags: readonly string[] = columns.flags ?? [];
  const omit: readonly string[] = columns.omit ?? [];
  let fields: Array<[column: string, field: string, flag: boolean]> | undefined;
  return (row) => {
    fields ??= Object.keys(row)
      .filter((column) => !omit.includes(column))
      .map((column) => [
        column,
        column.replace(/_([a-z0-9])/g, (_underscore, letter: string) => letter.toUpperCase()),
        flags.includes(column),
      ]);
    const values = row as Record<string, unknown>;
    const mapped: Record<string, unknown> = {};
    for (const [column, field, flag] of fields) mapped[field] = flag ? values[column] === 1 : values[column];
    return mapped as Mapped<Row, Flags, Omitted>;
  };
}

const toShopper: (row: Selectable<ShoppersTable>) => Shopper = rowMapper({
  omit: ['email_normalized', 'created_at'],
});

const toAddress: (row: Selectable<AddressesTable>) => Address = rowMapper({
  flags: ['is_default_billing', 'is_default_shipping'],
  omit: ['created_at'],
});

const toCard: (row: Selectable<CardsTable>) => Card = rowMapper({
  flags: ['is_default', 'needs_cvv'],
  // Read no more: `stored_credentials` keeps a card's stored credential per merchant.
  omit: ['created_at', 'stored_credentials_identifier'],
});

const toSession: (row: Selectable<SessionsTable>) => Session = rowMapper();

/** A read of at most one row, mapped. */
const one =
  <Key, Row, T>(read: (key: Key) => Promise<Row[]>, map: (row: Row) => T) =>
  async (key: Key): Promise<T | undefined> => {
    const [row] = await read(key);
    return row && map(row);
  };

/** False when a shopper with the same normalized email already exists. */
export async function insertShopper(db: Q, row: Insertable<ShoppersTable>): Promise<boolean> {
  const result = await db
    .insertInto('shoppers')
    .values(row)
    .onConflict((conflict) => conflict.column('email_normalized').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function findShopperByEmail(db: Q, emailNormalized: string): Promise<Shopper | undefined> {
  const row = await db
    .selectFrom('shoppers')
    .selectAll()
    .where('email_normalized', '=', emailNormalized)
    .executeTakeFirst();
  return row && toShopper(row);
}

export async function findShopper(db: Q, id: string): Promise<Shopper | undefined> {
  const row = await db.selectFrom('shoppers').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toShopper(row);
}

export async function updateAddress(db: Q, id: number, changes: Updateable<AddressesTable>): Promise<void> {
  await db.updateTable('addresses').set(changes).where('id', '=', id).execute();
}

export async function clearDefaultAddress(
  db: Q,
  shopperId: string,
  kind: 'is_default_billing' | 'is_default_shipping',
): Promise<void> {
  await db
    .updateTable('addresses')
    .set({ [kind]: 0 })
    .where('shopper_id', '=', shopperId)
    .where(kind, '=', 1)
    .execute();
}

export async function insertAddress(db: Q, row: Insertable<AddressesTable>): Promise<Address> {
  const inserted = await db.insertInto('addresses').values(row).returningAll().executeTakeFirstOrThrow();
  return toAddress(inserted);
}

/** The addresses in the wallet, removed ones left out. */
export async function countAddresses(db: Q, shopperId: string): Promise<number> {
  const { count } = await db
    .selectFrom('addresses')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('shopper_id', '=', shopperId)
    .where('removed_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(count);
}

/**
 * The addresses in the wallet, default billing first, then default shipping, then newest; with
 * `removed`, the removed ones too.
 */
export async function listAddresses(
  db: Q,
  shopperId: string,
  options: { removed?: boolean } = {},
): Promise<Address[]> {
  const rows = await db
    .selectFrom('addresses')
    .selectAll()
    .where('shopper_id', '=', shopperId)
    .$if(options.removed !== true, (query) => query.where('removed_at', 'is', null))
    .orderBy('is_default_billing', 'desc')
    .orderBy('is_default_shipping', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toAddress);
}

export async function findAddress(db: Q, id: number): Promise<Address | undefined> {
  const row = await db.selectFrom('addresses').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toAddress(row);
}

export async function findCardByVaultId(
  db: Q,
  shopperId: string,
  vaultId: string,
): Promise<Card | undefined> {
  const row = await db
    .selectFrom('cards')
    .selectAll()
    .where('shopper_id', '=', shopperId)
    .where('vault_id', '=', vaultId)
    .executeTakeFirst();
  return row && toCard(row);
}

/** What an erased shopper's email becomes (`blankShopper`): no address, so no sign-in matches it. */
const erasedEmail = (shopperId: string): string => `erased:${shopperId}`;

/** Whether the shopper's wallet was erased (`blankShopper`). */
export const isErased = (shopper: Shopper): boolean => shopper.email === erasedEmail(shopper.id);

/**
 * Makes the transactions that change a shopper's wallet wait for each other: on PostgreSQL by locking the
 * shopper's row until the commit; SQLite runs one write transaction at a time. A wallet erased meanwhile
 * (`blankShopper`) takes nothing more: its sign-ins went first, and a request that got in before them
 * is answered as theirs would be now.
 */
export async function lockShopper(db: Q, engine: Engine, shopperId: string): Promise<void> {
  const shopper = await db
    .selectFrom('shoppers')
    .select('email')
    .where('id', '=', shopperId)
    .$if(engine === 'postgres', (query) => query.forUpdate())
    .executeTakeFirst();
  if (shopper?.email === erasedEmail(shopperId)) {
    throw new DomainError('SHOPPER_UNAUTHORIZED', 'This wallet was erased; sign in again.');
  }
}

/** The cards in the wallet billed to one address are billed to another from now on. */
export async function moveBillingAddress(db: Q, shopperId: string, from: number, to: number): Promise<void> {
  await db
    .updateTable('cards')
    .set({ billing_address_id: to })
    .where('shopper_id', '=', shopperId)
    .where('billing_address_id', '=', from)
    .where('removed_at', 'is', null)
    .execute();
}

export async function clearDefaultCard(db: Q, shopperId: string): Promise<void> {
  await db
    .updateTable('cards')
    .set({ is_default: 0 })
    .where('shopper_id', '=', shopperId)
    .where('is_default', '=', 1)
    .execute();
}

export async function updateCard(db: Q, id: string, changes: Updateable<CardsTable>): Promise<void> {
  await db.updateTable('cards').set(changes).where('id', '=', id).execute();
}

/** Within the shopper's lock (lockShopper), after looking the vault id up: one card per number. */
export async function insertCard(db: Q, row: Insertable<CardsTable>): Promise<void> {
  await db.insertInto('cards').values(row).execute();
}

/** The cards in the wallet, removed ones left out: default first, then newest. */
export async function listCards(db: Q, shopperId: string): Promise<Card[]> {
  const rows = await db
    .selectFrom('cards')
    .selectAll()
    .where('shopper_id', '=', shopperId)
    .where('removed_at', 'is', null)
    .orderBy('is_default', 'desc')
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map(toCard);
}

export async function findCard(db: Q, id: string): Promise<Card | undefined> {
  const row = await db.selectFrom('cards').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toCard(row);
}

/** Every card the shopper ever saved, removed ones included: newest first. */
export async function listAllCards(db: Q, shopperId: string): Promise<Card[]> {
  const rows = await db
    .selectFrom('cards')
    .selectAll()
    .where('shopper_id', '=', shopperId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map(toCard);
}

/** Keeps the first stored credential of a card at a merchant: a later one changes nothing. */
export async function insertStoredCredential(db: Q, row: Insertable<StoredCredentialsTable>): Promise<void> {
  await db
    .insertInto('stored_credentials')
    .values(row)
    .onConflict((conflict) => conflict.columns(['card_id', 'merchant_id']).doNothing())
    .execute();
}

/** The network transaction id of the card's stored credential at the merchant; null when it has none. */
export async function findStoredCredential(
  db: Q,
  cardId: string,
  merchantId: string,
): Promise<string | null> {
  const row = await db
    .selectFrom('stored_credentials')
    .select('network_transaction_id')
    .where('card_id', '=', cardId)
    .where('merchant_id', '=', merchantId)
    .executeTakeFirst();
  return row?.network_transaction_id ?? null;
}

/**
 * Empties what identifies the shopper: the name, email (replaced by `erased:<id>`, which no sign-in can
 * match, leaving the address free for a new wallet) and phone; the names on its cards; and its addresses,
 * which lose every field and default. The rows stay, for what refers to them. Says how many addresses.
 */
export async function blankShopper(db: Q, shopperId: string): Promise<number> {
  const erased = erasedEmail(shopperId);
  await db
    .updateTable('shoppers')
    .set({ email: erased, email_normalized: erased, phone: null, first_name: '', last_name: '' })
    .where('id', '=', shopperId)
    .execute();
  await db
    .updateTable('cards')
    .set({ name_on_card: '', nickname: null })
    .where('shopper_id', '=', shopperId)
    .execute();
  const addresses = await db
    .updateTable('addresses')
    .set({
      first_name: '',
      last_name: '',
      company: null,
      address1: '',
      address2: null,
      city: '',
      state: '',
      zip: '',
      country: '',
      phone_number: null,
      is_default_billing: 0,
      is_default_shipping: 0,
    })
    .where('shopper_id', '=', shopperId)
    .executeTakeFirst();
  return Number(addresses.numUpdatedRows);
}

/** Ends the shopper's live payment-carousel sessions at `now`; says how many. */
export async function endSessions(db: Q, shopperId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('sessions')
    .set({ expires_at: now })
    .where('shopper_id', '=', shopperId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function countLiveSessions(db: Q, shopperId: string, now: number): Promise<number> {
  const { count } = await db
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('shopper_id', '=', shopperId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertSession(db: Q, row: Selectable<SessionsTable>): Promise<Session> {
  await db.insertInto('sessions').values(row).execute();
  return toSession(row);
}

export interface KeyReads {
  card(id: string): Promise<Card | undefined>;
  address(id: number): Promise<Address | undefined>;
  session(id: string): Promise<Session | undefined>;
}

/** The reads of one row by its key that every credentials request makes, compiled once (see `prepared`). */
export function keyReads(db: Db): KeyReads {
  const { kysely } = db;
  const card = prepared(db, (id: string) => kysely.selectFrom('cards').selectAll().where('id', '=', id), [
    '',
  ]);
  const address = prepared(
    db,
    (id: number) => kysely.selectFrom('addresses').selectAll().where('id', '=', id),
    [0],
  );
  const session = prepared(
    db,
    (id: string) => kysely.selectFrom('sessions').selectAll().where('id', '=', id),
    [''],
  );
  return { card: one(card, toCard), address: one(address, toAddress), session: one(session, toSession) };
}
