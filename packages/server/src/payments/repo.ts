import type { Kysely, Transaction } from 'kysely';
import { batchInsert, type Database, type Db, prepared } from '../db/index.js';
import type { CredentialsRequestsTable } from '../db/schema.js';
import type { CredentialsRequest, ExternalResponseRecord } from './types.js';

type Executor = Kysely<Database> | Transaction<Database>;

function toRequest(row: CredentialsRequestsTable): CredentialsRequest {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    sessionId: row.session_id,
    paymentId: row.payment_id,
    amount: row.amount,
    currency: row.currency,
    merchantReference: row.merchant_reference,
    webhookMessageId: row.webhook_message_id,
    createdAt: row.created_at,
    cryptogramKeyId: row.cryptogram_key_id,
  };
}

function toRequestRow(request: CredentialsRequest): CredentialsRequestsTable {
  return {
    id: request.id,
    merchant_id: request.merchantId,
    session_id: request.sessionId,
    payment_id: request.paymentId,
    amount: request.amount,
    currency: request.currency,
    merchant_reference: request.merchantReference,
    webhook_message_id: request.webhookMessageId,
    created_at: request.createdAt,
    cryptogram_key_id: request.cryptogramKeyId,
  };
}

const insertRequestRows = batchInsert('credentials_requests', {
  id: true,
  merchant_id: true,
  session_id: true,
  payment_id: true,
  amount: true,
  currency: true,
  merchant_reference: true,
  webhook_message_id: true,
  created_at: true,
  cryptogram_key_id: true,
});

export class PaymentsRepo {
  readonly #byId: (id: string) => Promise<CredentialsRequestsTable[]>;

  constructor(private readonly db: Db) {
    // A webhook payload reads its request unless this process remembered it: compiled once (see `prepared`).
    this.#byId = prepared(
      db,
      (id: string) => db.kysely.selectFrom('credentials_requests').selectAll().where('id', '=', id),
      [''],
    );
  }

  /**
   * How many credentials requests each merchant made for these cards, each one a webhook with card data:
   * for the shopper's request for access (`wallet-checkout shopper show`). No index leads with the card:
   * a command's occasional read, not a request's.
   */
  async countByCards(paymentIds: readonly string[]): Promise<{ merchantId: string; count: number }[]> {
    if (paymentIds.length === 0) return [];
    const rows = await this.db.kysely
      .selectFrom('credentials_requests')
      .select((eb) => ['merchant_id', eb.fn.countAll<number | string>().as('count')])
      .where('payment_id', 'in', paymentIds)
      .groupBy('merchant_id')
      .orderBy('merchant_id')
      .execute();
    return rows.map((row) => ({ merchantId: row.merchant_id, count: Number(row.count) }));
  }

  /** In the caller's transaction. */
  insertRequests(executor: Executor, requests: CredentialsRequest[]): Promise<void> {
    return insertRequestRows(executor, requests.map(toRequestRow));
  }

  async findRequest(merchantId: string, id: string): Promise<CredentialsRequest | undefined> {
    const row = await this.db.kysely
      .selectFrom('credentials_requests')
      .selectAll()
      .where('id', '=', id)
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst();
    return row && toRequest(row);
  }

  /** The request a webhook is built from; merchant-agnostic because the dispatcher owns the message. */
  async requestById(id: string): Promise<CredentialsRequest | undefined> {
    const [row] = await this.#byId(id);
    return row && toRequest(row);
  }

  /** The merchant's requests of these ids, in no particular order; other merchants' are left out. */
  async requestsByIds(merchantId: string, ids: readonly string[]): Promise<CredentialsRequest[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.kysely
      .selectFrom('credentials_requests')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .where('id', 'in', [...ids])
      .execute();
    return rows.map(toRequest);
  }

  async requestsByReference(
    merchantId: string,
    merchantReference: string,
    limit: number,
  ): Promise<CredentialsRequest[]> {
    const rows = await this.db.kysely
      .selectFrom('credentials_requests')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .where('merchant_reference', '=', merchantReference)
      .orderBy('created_at', 'desc')
      // Requests of the same millisecond in one order every time (ids start with their time).
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toRequest);
  }

  async latestRequestForPayment(
    merchantId: string,
    paymentId: string,
  ): Promise<CredentialsRequest | undefined> {
    const row = await this.db.kysely
      .selectFrom('credentials_requests')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .where('payment_id', '=', paymentId)
      .orderBy('created_at', 'desc')
      // Requests of the same millisecond in one order every time (ids start with their time).
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && toRequest(row);
  }

  /** Deletes these credentials requests and the external responses reported for them. */
  async deleteRequests(executor: Executor, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await executor
      .deleteFrom('external_responses')
      .where('credentials_request_id', 'in', [...ids])
      .execute();
    await executor
      .deleteFrom('credentials_requests')
      .where('id', 'in', [...ids])
      .execute();
  }

  async insertExternalResponse(
    executor: Executor,
    record: ExternalResponseRecord & { merchantId: string; paymentId: string; rawResponseCiphertext: string },
  ): Promise<void> {
    await executor
      .insertInto('external_responses')
      .values({
        id: record.id,
        merchant_id: record.merchantId,
        credentials_request_id: record.credentialsRequestId,
        payment_id: record.paymentId,
        amount: record.amount,
        currency: record.currency,
        psp_host_name: record.pspHostName,
        psp_raw_response_ciphertext: record.rawResponseCiphertext,
        is_recurring: record.isRecurring ? 1 : 0,
        created_at: record.createdAt,
      })
      .execute();
  }

  /** The external responses reported for these requests of the merchant's, oldest first. */
  async externalResponses(
    merchantId: string,
    credentialsRequestIds: readonly string[],
  ): Promise<ExternalResponseRecord[]> {
    if (credentialsRequestIds.length === 0) return [];
    const rows = await this.db.kysely
      .selectFrom('external_responses')
      .select([
        'id',
        'credentials_request_id',
        'psp_host_name',
        'amount',
        'currency',
        'is_recurring',
        'created_at',
      ])
      .where('merchant_id', '=', merchantId)
      .where('credentials_request_id', 'in', [...credentialsRequestIds])
      .orderBy('created_at', 'asc')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      credentialsRequestId: row.credentials_request_id,
      pspHostName: row.psp_host_name,
      amount: row.amount,
      currency: row.currency,
      isRecurring: row.is_recurring === 1,
      createdAt: row.created_at,
    }));
  }
}
