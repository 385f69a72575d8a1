/**
 * The audit trail: who did what to merchants, keys, secrets, gateway accounts, the vault, shoppers' data
 * and webhooks, and when. An event is written in the transaction of the action it records, so neither is
 * ever without the other.
 *
 * Events are numbered one at a time (`seq`) and chained: each stores the hash of the one before and its
 * own, SHA-256 over that hash and its fields. `verify` walks the chain, so an event altered, removed or
 * slipped in shows; the last hash, copied elsewhere (the log server), also shows events cut from the end.
 * Every writer first updates the chain's one head row, which numbers events across processes: PostgreSQL
 * holds the row until the transaction ends, and SQLite has one writer at a time anyway.
 */
import { createHash } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, Db } from '../db/index.js';
import type { AuditEventsTable } from '../db/schema.js';
import { ValidationError } from '../errors.js';
import type { Actor } from './actor.js';

/** The first event's `prevHash`. */
export const GENESIS_HASH = '0'.repeat(64);

/** What an event records. Names are stable: operators search and alert on them. */
export const AUDIT_ACTIONS = [
  'merchant.created',
  'merchant.updated',
  'merchant.credentials_approved',
  'merchant.credentials_withdrawn',
  'api_key.created',
  'api_key.revoked',
  'webhook_secret.rotated',
  'gateway_account.set',
  'gateway_account.removed',
  'vault.key_rotated',
  'shopper.viewed',
  'shopper.erased',
  'wallet.address_added',
  'wallet.address_changed',
  'wallet.address_removed',
  'wallet.card_added',
  'wallet.card_changed',
  'wallet.card_removed',
  'device.remembered',
  'device.forgotten',
  'webhook.resent',
  'webhooks.recovered',
  'database.backed_up',
  'audit.viewed',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** JSON values: never a secret, a key or card data. */
export type AuditValue =
  | string
  | number
  | boolean
  | null
  | readonly AuditValue[]
  | { readonly [key: string]: AuditValue };
export type AuditDetails = Record<string, AuditValue>;

export interface NewAuditEvent {
  actor: Actor;
  action: AuditAction;
  merchantId?: string;
  /** The key, shopper or message acted on, when not the merchant itself. */
  subject?: string;
  details?: AuditDetails;
}

export interface AuditEvent {
  seq: number;
  at: number;
  actor: string;
  action: string;
  merchantId: string | null;
  subject: string | null;
  details: AuditDetails;
  prevHash: string;
  hash: string;
}

export interface AuditFilter {
  /** Events at or after this time (ms since the epoch). */
  since?: number;
  /** Events numbered after this one: a reader that copies the trail elsewhere continues from its last. */
  afterSeq?: number;
  merchantId?: string;
  action?: AuditAction;
  /** What was acted on: a shopper (their wallet's changes, devices and erasure), a key, a message. */
  subject?: string;
  /**
   * At most this many, oldest first; 100 unless said otherwise. The first ones at or after `since` or
   * `afterSeq` when either is given, else the latest.
   */
  limit?: number;
}

export type Verification =
  | { ok: true; events: number; head: { seq: number; hash: string } }
  | { ok: false; events: number; seq: number; problem: string };

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;
/** Events read a query while verifying. */
const VERIFY_PAGE = 1000;
/** Events copied to the log a transaction: a few milliseconds, during which writers of the trail wait. */
const COPY_BATCH = 500;

type Row = Selectable<AuditEventsTable>;

/** SHA-256, hex, of the previous event's hash and this event's fields, as stored. */
export function chainHash(prevHash: string, row: Omit<Row, 'prev_hash' | 'hash'>): string {
  const fields = [
    Number(row.seq),
    Number(row.at),
    row.actor,
    row.action,
    row.merchant_id,
    row.subject,
    row.details,
  ];
  return createHash('sha256')
    .update(`${prevHash}\n${JSON.stringify(fields)}`)
    .digest('hex');
}

function missing(first: number, last: number): string {
  return first === last ? `event ${first} is missing` : `events ${first} to ${last} are missing`;
}

function toEvent(row: Row): AuditEvent {
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    actor: row.actor,
    action: row.action,
    merchantId: row.merchant_id,
    subject: row.subject,
    details: JSON.parse(row.details),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/**
 * Records an event in the caller's transaction, the one of the action it records, at `at` (ms since the
 * epoch). From here to the commit, other writers of the trail wait.
 */
export async function recordAudit(
  trx: Transaction<Database>,
  event: NewAuditEvent,
  at: number,
): Promise<AuditEvent> {
  const head = await trx
    .updateTable('audit_head')
    .set((eb) => ({ seq: eb('seq', '+', 1) }))
    .where('id', '=', 1)
    .returning(['seq', 'hash'])
    .executeTakeFirst();
  if (!head) throw new Error('the audit trail has no head row: migration 014 did not run');
  const fields = {
    seq: Number(head.seq),
    at,
    actor: event.actor,
    action: event.action,
    merchant_id: event.merchantId ?? null,
    subject: event.subject ?? null,
    details: JSON.stringify(event.details ?? {}),
  };
  const row: Row = { ...fields, prev_hash: head.hash, hash: chainHash(head.hash, fields) };
  await trx.insertInto('audit_events').values(row).execute();
  await trx.updateTable('audit_head').set({ hash: row.hash }).where('id', '=', 1).execute();
  return toEvent(row);
}

/** Reading and checking the trail, and recording actions that have no transaction of their own. */
export class AuditTrail {
  readonly #kysely: Kysely<Database>;
  readonly #now: () => number;

  constructor(db: Pick<Db, 'kysely'>, now: () => number = Date.now) {
    this.#kysely = db.kysely;
    this.#now = now;
  }

  /** Records an event alone, for an action that wrote nothing (a read) or wrote outside the database. */
  record(event: NewAuditEvent): Promise<AuditEvent> {
    return this.#kysely.transaction().execute((trx) => recordAudit(trx, event, this.#now()));
  }

  /**
   * Hands `emit` every event not copied yet, oldest first, and records how far it got, so that each event
   * is copied once across every process (again only after a crash between the two). Says how many.
   */
  async copyNew(emit: (event: AuditEvent) => void): Promise<number> {
    let copied = 0;
    for (;;) {
      const head = await this.#kysely
        .selectFrom('audit_head')
        .select(['seq', 'logged_seq'])
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      // Read without a lock first: a process with nothing to copy never holds up the trail's writers.
      if (Number(head.seq) <= Number(head.logged_seq)) return copied;
      const batch = await this.#kysely.transaction().execute(async (trx) => {
        // Taking the head waits for a writer's commit, so no event numbered below it is still to come.
        const locked = await trx
          .updateTable('audit_head')
          .set((eb) => ({ logged_seq: eb.ref('logged_seq') }))
          .where('id', '=', 1)
          .returning('logged_seq')
          .executeTakeFirstOrThrow();
        const rows = await trx
          .selectFrom('audit_events')
          .selectAll()
          .where('seq', '>', Number(locked.logged_seq))
          .orderBy('seq')
          .limit(COPY_BATCH)
          .execute();
        const last = rows.at(-1);
        if (!last) return 0;
        for (const row of rows) emit(toEvent(row));
        await trx
          .updateTable('audit_head')
          .set({ logged_seq: Number(last.seq) })
          .where('id', '=', 1)
          .execute();
        return rows.length;
      });
      copied += batch;
      if (batch < COPY_BATCH) return copied;
    }
  }

  /**
   * One merchant's events, newest first, `limit` of them from before `before` (an event's number), with
   * whether older ones follow.
   */
  async merchantPage(
    merchantId: string,
    page: { limit: number; before?: number },
  ): Promise<{ events: AuditEvent[]; hasMore: boolean }> {
    const rows = await this.#kysely
      .selectFrom('audit_events')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .$if(page.before !== undefined, (q) => q.where('seq', '<', page.before as number))
      .orderBy('seq', 'desc')
      .limit(page.limit + 1)
      .execute();
    return { events: rows.slice(0, page.limit).map(toEvent), hasMore: rows.length > page.limit };
  }

  /** Events matching the filter, oldest first: the latest `limit`, or the first from `since` or `afterSeq`. */
  async list(filter: AuditFilter = {}): Promise<AuditEvent[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
      throw new ValidationError(`limit must be an integer from 1 to ${MAX_LIST_LIMIT}`);
    }
    // From a point on, the first events after it; else the latest.
    const fromStart = filter.since !== undefined || filter.afterSeq !== undefined;
    const rows = await this.#kysely
      .selectFrom('audit_events')
      .selectAll()
      .$if(filter.since !== undefined, (q) => q.where('at', '>=', filter.since as number))
      .$if(filter.afterSeq !== undefined, (q) => q.where('seq', '>', filter.afterSeq as number))
      .$if(filter.merchantId !== undefined, (q) => q.where('merchant_id', '=', filter.merchantId as string))
      .$if(filter.action !== undefined, (q) => q.where('action', '=', filter.action as string))
      .$if(filter.subject !== undefined, (q) => q.where('subject', '=', filter.subject as string))
      .orderBy('seq', fromStart ? 'asc' : 'desc')
      .limit(limit)
      .execute();
    return (fromStart ? rows : rows.reverse()).map(toEvent);
  }

  /**
   * Walks the whole chain from the first event: numbers without gaps, each event's `prevHash` the hash of
   * the one before, each hash recomputed, and the head naming the last. Says where it first breaks.
   */
  async verify(): Promise<Verification> {
    let previous = { seq: 0, hash: GENESIS_HASH };
    let events = 0;
    for (;;) {
      const rows = await this.#kysely
        .selectFrom('audit_events')
        .selectAll()
        .where('seq', '>', previous.seq)
        .orderBy('seq')
        .limit(VERIFY_PAGE)
        .execute();
      for (const row of rows) {
        const seq = Number(row.seq);
        const broken = (problem: string): Verification => ({ ok: false, events, seq, problem });
        if (seq !== previous.seq + 1) return broken(missing(previous.seq + 1, seq - 1));
        if (row.prev_hash !== previous.hash) {
          return broken(`its previous hash is not the hash of event ${previous.seq}`);
        }
        if (chainHash(row.prev_hash, row) !== row.hash) return broken('its fields do not match its hash');
        previous = { seq, hash: row.hash };
        events++;
      }
      if (rows.length < VERIFY_PAGE) break;
    }
    const head = await this.#kysely
      .selectFrom('audit_head')
      .select(['seq', 'hash'])
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    if (Number(head.seq) !== previous.seq || head.hash !== previous.hash) {
      return {
        ok: false,
        events,
        seq: Number(head.seq),
        problem: `the chain's head names event ${Number(head.seq)}, but the last event is ${previous.seq}`,
      };
    }
    return { ok: true, events, head: previous };
  }
}
