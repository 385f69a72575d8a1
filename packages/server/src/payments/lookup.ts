import { DomainError } from '../errors.js';
import type { MessageState, MessageWithAttempts } from '../webhooks/index.js';
import type { PaymentsRepo } from './repo.js';
import type { CredentialsRequest, ExternalResponseRecord } from './types.js';

/**
 * A credentials request's state follows its webhook message, so it is derived rather than stored:
 * PENDING → ACKNOWLEDGED, DELIVERED → DELIVERED, FAILED → FAILED (a resend takes it back to ACKNOWLEDGED).
 */
export type CredentialsRequestState = 'ACKNOWLEDGED' | 'DELIVERED' | 'FAILED';

export function credentialsRequestState(messageState: MessageState): CredentialsRequestState {
  switch (messageState) {
    case 'PENDING':
      return 'ACKNOWLEDGED';
    case 'DELIVERED':
      return 'DELIVERED';
    case 'FAILED':
      return 'FAILED';
    default: {
      const unreachable: never = messageState;
      throw new Error(`unknown message state ${String(unreachable)}`);
    }
  }
}

export interface CredentialsRequestView {
  request: CredentialsRequest;
  state: CredentialsRequestState;
  message: MessageWithAttempts;
  externalResponses: ExternalResponseRecord[];
}

export interface LookupDeps {
  payments: PaymentsRepo;
  webhooks: { get(merchantId: string, messageId: string): Promise<MessageWithAttempts> };
}

/** What a merchant may see of its credentials requests: state, delivery attempts, why it failed. Never card data. */
export class CredentialsLookup {
  constructor(private readonly deps: LookupDeps) {}

  async byId(merchantId: string, requestId: string): Promise<CredentialsRequestView> {
    const request = await this.deps.payments.findRequest(merchantId, requestId);
    if (!request)
      throw new DomainError('CREDENTIALS_REQUEST_NOT_FOUND', `No credentials request ${requestId}.`);
    return this.#view(request);
  }

  async byReference(
    merchantId: string,
    merchantReference: string,
    limit: number,
  ): Promise<CredentialsRequestView[]> {
    const requests = await this.deps.payments.requestsByReference(merchantId, merchantReference, limit);
    return Promise.all(requests.map((request) => this.#view(request)));
  }

  async #view(request: CredentialsRequest): Promise<CredentialsRequestView> {
    const [message, externalResponses] = await Promise.all([
      this.deps.webhooks.get(request.merchantId, request.webhookMessageId),
      this.deps.payments.externalResponses(request.merchantId, request.id),
    ]);
    return { request, state: credentialsRequestState(message.state), message, externalResponses };
  }
}
