import type { IdempotencyContext } from '../api/plugins/idempotency.js';
import type { Db } from '../db/index.js';
import { DomainError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency/store.js';
import { newId } from '../ids.js';
import type { Merchant } from '../merchants/types.js';
import { linkExternalResponse } from '../orders/index.js';
import type { KeyRing } from '../vault/keyring.js';
import { assertSupportedCurrency } from './currency.js';
import type { PaymentsRepo } from './repo.js';
import type { ExternalResponseAcknowledgement, ExternalResponseInput } from './types.js';

export interface ExternalResponseDeps {
  db: Db;
  repo: PaymentsRepo;
  idempotency: IdempotencyStore;
  keyRing: KeyRing;
  now?: () => number;
}

/**
 * POST /payments/externalresponse: links the processor's answer to the merchant's latest credentials
 * request for that payment method and, in the same transaction, to the merchant-authorized order whose
 * selection handed over that session (orders' face; a sandbox session has no order). The raw response may
 * carry card data, so it is stored encrypted (associated data: the record's id) and not copied to the order.
 */
export class ExternalResponseService {
  constructor(private readonly deps: ExternalResponseDeps) {}

  async report(
    merchant: Merchant,
    input: ExternalResponseInput,
    idempotency?: IdempotencyContext,
  ): Promise<ExternalResponseAcknowledgement> {
    assertSupportedCurrency(input.currency);
    const request = await this.deps.repo.latestRequestForPayment(merchant.id, input.paymentId);
    if (!request) {
      throw new DomainError(
        'CREDENTIALS_REQUEST_NOT_FOUND',
        `No credentials request of this merchant for paymentId ${input.paymentId}; call POST /payments/credentials first.`,
      );
    }
    if (input.currency !== request.currency) {
      throw new DomainError(
        'UNSUPPORTED_CURRENCY',
        `currency must be ${request.currency}, the currency of the credentials request.`,
      );
    }
    if (input.amount > request.amount) {
      throw new DomainError(
        'AMOUNT_EXCEEDS_REQUESTED',
        `amount ${input.amount} is above the ${request.amount} of credentials request ${request.id}.`,
      );
    }
    const id = newId('externalResponse');
    const now = (this.deps.now ?? Date.now)();
    const ack: ExternalResponseAcknowledgement = {
      code: 200,
      message: 'OK',
      externalResponseId: id,
      requestId: request.id,
    };
    const answer = idempotency?.response(200, ack);
    await this.deps.db.kysely.transaction().execute(async (trx) => {
      if (answer && (await this.deps.idempotency.save(trx, [answer])).size > 0) {
        throw new DomainError(
          'IDEMPOTENCY_REQUEST_IN_PROGRESS',
          'A request with this Idempotency-Key is still in progress.',
        );
      }
      await this.deps.repo.insertExternalResponse(trx, {
        id,
        merchantId: merchant.id,
        credentialsRequestId: request.id,
        paymentId: input.paymentId,
        amount: input.amount,
        currency: input.currency,
        pspHostName: input.pspHostName,
        isRecurring: input.isRecurring,
        rawResponseCiphertext: this.deps.keyRing.seal(
          input.pspRawResponse,
          'external_responses.psp_raw_response_ciphertext',
          id,
        ),
        createdAt: now,
      });
      await linkExternalResponse(
        trx,
        { merchantId: merchant.id, sessionId: request.sessionId, paymentId: input.paymentId },
        {
          externalResponseId: id,
          pspHostName: input.pspHostName,
          amount: input.amount,
          currency: input.currency,
          isRecurring: input.isRecurring,
          reportedAt: now,
        },
      );
    });
    return ack;
  }
}
