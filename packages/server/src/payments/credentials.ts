import type { Transaction } from 'kysely';
import type { IdempotencyContext } from '../api/plugins/idempotency.js';
import { GroupCommit } from '../db/group-commit.js';
import type { Database, Db } from '../db/index.js';
import { DomainError } from '../errors.js';
import type { IdempotencyStore, StoredResponse } from '../idempotency/store.js';
import { newId } from '../ids.js';
import type { Merchant } from '../merchants/types.js';
import type { TokenService } from '../vault/token-service.js';
import type { Card, Session } from '../wallet/types.js';
import type { WebhookMessageRow } from '../webhooks/outbox.js';
import { assertSupportedCurrency } from './currency.js';
import type { PaymentsRepo } from './repo.js';
import type { CredentialsAcknowledgement, CredentialsRequest, CredentialsRequestInput } from './types.js';

export const PAYMENT_CREDENTIALS = 'PAYMENT_CREDENTIALS';

export interface CredentialsDeps {
  db: Db;
  repo: PaymentsRepo;
  idempotency: IdempotencyStore;
  sessions: { find(id: string): Promise<Session | undefined> };
  wallet: { findCard(id: string): Promise<Card | undefined>; isExpired(card: Card, now: Date): boolean };
  outbox: {
    newMessage(
      message: {
        merchantId: string;
        eventName: string;
        subjectId: string;
        schedule: 'credentials' | 'default';
      },
      now: number,
    ): WebhookMessageRow;
    insertMessages(trx: Transaction<Database>, rows: WebhookMessageRow[]): Promise<void>;
  };
  /** Told of each committed request, so the first delivery need not read back what was just written. */
  payloads: { remember(request: CredentialsRequest, card: Card): void };
  dispatcher: { committed(rows: WebhookMessageRow[]): void };
  /** Names the key each new request's cryptogram is derived under. */
  tokens: Pick<TokenService, 'cryptogramKeyId'>;
  now?: () => number;
}

interface Write {
  request: CredentialsRequest;
  message: WebhookMessageRow;
  answer: StoredResponse | undefined;
}

/**
 * POST /payments/credentials: everything that can be checked is checked before the acknowledgement, then
 * the request record, its outbox message and the idempotent answer commit together (group commit), and
 * the first delivery attempt starts as soon as the commit is on disk.
 */
export class CredentialsService {
  readonly #writes: GroupCommit<Write>;
  readonly #now: () => number;

  constructor(private readonly deps: CredentialsDeps) {
    this.#now = deps.now ?? Date.now;
    this.#writes = new GroupCommit(deps.db, (trx, writes) => this.#commit(trx, writes));
  }

  async request(
    merchant: Merchant,
    input: CredentialsRequestInput,
    idempotency?: IdempotencyContext,
  ): Promise<CredentialsAcknowledgement> {
    const now = this.#now();
    // Before the merchant's checks: a refused currency is a 400, never kept under an Idempotency-Key.
    assertSupportedCurrency(input.currency);
    if (merchant.credentialTypes.length === 0) {
      throw new DomainError(
        'MERCHANT_NOT_APPROVED',
        "This merchant account is not approved for the credentials flow: the service's operator approves it, choosing NETWORK_TOKEN, PAN or both.",
      );
    }
    if (!merchant.webhookUrl) {
      throw new DomainError(
        'WEBHOOK_URL_NOT_CONFIGURED',
        "This merchant account has no webhook URL for the credentials to go to: the service's operator sets it.",
      );
    }
    const session = await this.deps.sessions.find(input.sessionId);
    if (!session || session.merchantId !== merchant.id) {
      throw new DomainError('SESSION_NOT_FOUND', `sessionId ${input.sessionId} was not found.`);
    }
    if (session.expiresAt <= now)
      throw new DomainError('SESSION_EXPIRED', `sessionId ${input.sessionId} has expired.`);
    const card = await this.deps.wallet.findCard(input.paymentId);
    // A card removed from the wallet takes no new request; one already acknowledged is still delivered.
    // A session the hosted checkout made allows the card the shopper chose there alone.
    if (
      !card ||
      card.shopperId !== session.shopperId ||
      card.removedAt !== null ||
      (session.paymentId !== null && session.paymentId !== card.id)
    ) {
      throw new DomainError(
        'PAYMENT_METHOD_NOT_FOUND',
        `paymentId ${input.paymentId} was not found in this session.`,
      );
    }
    if (this.deps.wallet.isExpired(card, new Date(now))) {
      throw new DomainError('PAYMENT_METHOD_EXPIRED', `paymentId ${input.paymentId} is an expired card.`);
    }
    if (session.amountLimit !== null && input.amount > session.amountLimit) {
      throw new DomainError(
        'AMOUNT_EXCEEDS_SELECTION',
        `amount ${input.amount} is more than the ${session.amountLimit} cents the shopper agreed to in this session's checkout.`,
      );
    }

    const id = newId('credentialsRequest');
    const message = this.deps.outbox.newMessage(
      { merchantId: merchant.id, eventName: PAYMENT_CREDENTIALS, subjectId: id, schedule: 'credentials' },
      now,
    );
    // Field by field: what the schema lets through beside the interface's fields is not kept.
    const request: CredentialsRequest = {
      id,
      merchantId: merchant.id,
      sessionId: input.sessionId,
      paymentId: input.paymentId,
      amount: input.amount,
      currency: input.currency,
      merchantReference: input.merchantReference,
      webhookMessageId: message.id,
      createdAt: now,
      cryptogramKeyId: this.deps.tokens.cryptogramKeyId(),
    };
    const ack: CredentialsAcknowledgement = { code: 200, message: 'OK', requestId: id };
    await this.#writes.submit({ request, message, answer: idempotency?.response(200, ack) });
    this.deps.payloads.remember(request, card);
    this.deps.dispatcher.committed([message]);
    return ack;
  }

  async #commit(trx: Transaction<Database>, writes: Write[]): Promise<(Error | undefined)[]> {
    const answers = writes.flatMap((write) => (write.answer ? [write.answer] : []));
    const taken = await this.deps.idempotency.save(trx, answers);
    const outcomes = writes.map((write) =>
      write.answer && taken.has(`${write.answer.merchantId}\n${write.answer.key}`)
        ? new DomainError(
            'IDEMPOTENCY_REQUEST_IN_PROGRESS',
            'A request with this Idempotency-Key is still in progress.',
          )
        : undefined,
    );
    const accepted = writes.filter((_, i) => !outcomes[i]);
    await this.deps.repo.insertRequests(
      trx,
      accepted.map((write) => write.request),
    );
    await this.deps.outbox.insertMessages(
      trx,
      accepted.map((write) => write.message),
    );
    return outcomes;
  }
}
