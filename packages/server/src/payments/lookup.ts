import { DomainError, NotFoundError } from '../errors.js';
import type { ListFilter, MessageState, MessageWithAttempts } from '../webhooks/index.js';
import { PAYMENT_CREDENTIALS } from './credentials.js';
import type { PaymentsRepo } from './repo.js';
import type { CredentialsRequest, ExternalResponseRecord } from './types.js';

/**
 * A credentials request's state follows its webhook message, so it is derived rather than stored:
 * PENDING → ACKNOWLEDGED, DELIVERED → DELIVERED, FAILED → FAILED (a resend takes it back to ACKNOWLEDGED).
 */
export const CREDENTIALS_REQUEST_STATES = ['ACKNOWLEDGED', 'DELIVERED', 'FAILED'] as const;
export type CredentialsRequestState = (typeof CREDENTIALS_REQUEST_STATES)[number];

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

/** The state of the message a request in `state` has: `credentialsRequestState` read backwards. */
const MESSAGE_STATE: Record<CredentialsRequestState, MessageState> = {
  ACKNOWLEDGED: 'PENDING',
  DELIVERED: 'DELIVERED',
  FAILED: 'FAILED',
};

export interface CredentialsListFilter extends Pick<ListFilter, 'createdSince' | 'createdBefore'> {
  state?: CredentialsRequestState;
  /** 1–100. */
  limit: number;
  /**
   * The id of one of this merchant's requests, usually the last of the previous page: only requests
   * after it in list order (older) are listed. Another merchant's id is CREDENTIALS_REQUEST_NOT_FOUND.
   */
  startingAfter?: string;
}

export interface CredentialsRequestPage {
  data: CredentialsRequestView[];
  /** Whether requests matching the filter lie beyond this page (ask with the last one's id). */
  hasMore: boolean;
}

export interface CredentialsRequestView {
  request: CredentialsRequest;
  state: CredentialsRequestState;
  message: MessageWithAttempts;
  externalResponses: ExternalResponseRecord[];
}

export interface LookupDeps {
  payments: PaymentsRepo;
  webhooks: {
    getMany(merchantId: string, messageIds: readonly string[]): Promise<MessageWithAttempts[]>;
    listPage(
      merchantId: string,
      filter: ListFilter,
    ): Promise<{ data: { subjectId: string }[]; hasMore: boolean }>;
  };
}

/** What a merchant may see of its credentials requests: state, delivery attempts, why it failed. Never card data. */
export class CredentialsLookup {
  constructor(private readonly deps: LookupDeps) {}

  async byId(merchantId: string, requestId: string): Promise<CredentialsRequestView> {
    const request = await this.deps.payments.findRequest(merchantId, requestId);
    const [view] = request ? await this.#views(merchantId, [request]) : [];
    if (!view) throw new DomainError('CREDENTIALS_REQUEST_NOT_FOUND', `No credentials request ${requestId}.`);
    return view;
  }

  async byReference(
    merchantId: string,
    merchantReference: string,
    limit: number,
  ): Promise<CredentialsRequestView[]> {
    const requests = await this.deps.payments.requestsByReference(merchantId, merchantReference, limit);
    return this.#views(merchantId, requests);
  }

  /**
   * A page of the merchant's requests, newest first. A request is created with its PAYMENT_CREDENTIALS
   * message, in one transaction and at one time, and its state is the message's: so the page is the
   * page of those messages (the webhooks' list, with its order, filters and cursor), each read as its
   * request. The cursor is a request id, looked up without the filters: a position in the list.
   */
  async list(merchantId: string, filter: CredentialsListFilter): Promise<CredentialsRequestPage> {
    const { state, startingAfter, ...window } = filter;
    let after: CredentialsRequest | undefined;
    if (startingAfter !== undefined) {
      after = await this.deps.payments.findRequest(merchantId, startingAfter);
      if (!after) {
        throw new NotFoundError(
          'CREDENTIALS_REQUEST_NOT_FOUND',
          `startingAfter: credentials request ${startingAfter} was not found.`,
        );
      }
    }
    const page = await this.deps.webhooks.listPage(merchantId, {
      ...window,
      eventName: PAYMENT_CREDENTIALS,
      ...(state === undefined ? {} : { state: MESSAGE_STATE[state] }),
      ...(after === undefined ? {} : { startingAfter: after.webhookMessageId }),
    });
    const requests = await this.deps.payments.requestsByIds(
      merchantId,
      page.data.map((message) => message.subjectId),
    );
    const byId = new Map(requests.map((request) => [request.id, request]));
    const listed = page.data.flatMap((message) => byId.get(message.subjectId) ?? []);
    return { data: await this.#views(merchantId, listed), hasMore: page.hasMore };
  }

  /**
   * The requests with their messages and external responses, in their order: three statements for a
   * whole page. A request whose message is gone (the retention deletes both at once) is left out.
   */
  async #views(merchantId: string, requests: CredentialsRequest[]): Promise<CredentialsRequestView[]> {
    if (requests.length === 0) return [];
    const [messages, responses] = await Promise.all([
      this.deps.webhooks.getMany(
        merchantId,
        requests.map((request) => request.webhookMessageId),
      ),
      this.deps.payments.externalResponses(
        merchantId,
        requests.map((request) => request.id),
      ),
    ]);
    const messageById = new Map(messages.map((message) => [message.id, message]));
    return requests.flatMap((request) => {
      const message = messageById.get(request.webhookMessageId);
      if (!message) return [];
      const externalResponses = responses.filter((response) => response.credentialsRequestId === request.id);
      return [{ request, state: credentialsRequestState(message.state), message, externalResponses }];
    });
  }
}
