/**
 * The few calls the shop's server makes to Wallet Checkout's merchant API, with its API key. The key
 * stays on the server: pages get only the merchant id, which is public.
 */

/** The parts of `GET /orders/{orderId}` the shop checks (the full resource is in the API reference). */
export interface WalletOrder {
  orderId: string;
  merchantOrderId: string | null;
  status: 'CREATED' | 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'ABANDONED';
  currency: string;
  subtotal: number;
  total: number;
  shipping: { amount: number } | null;
  taxes: number | null;
  transactionDetails: { gatewayTransactionId: string; networkTransactionId: string | null } | null;
  error: { errorCode: string; errorMessage: string | null } | null;
  /** Merchant authorization mode: the session and card the shopper selected for this order. */
  merchantAuthorization?: { sessionId: string; paymentId: string } | null;
}

export interface CredentialsRequest {
  paymentId: string;
  sessionId: string;
  /** Integer cents. */
  amount: number;
  merchantReference: string;
  currency: string;
}

export interface ExternalResponse {
  paymentId: string;
  /** The processor's answer exactly as received. */
  pspRawResponse: string;
  amount: number;
  pspHostName: string;
  currency: string;
  isRecurring: boolean;
}

/** A refusal from Wallet Checkout: `{ errorCode, errorMessage }` and the HTTP status. */
export class WalletApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    errorMessage: string,
  ) {
    super(`${errorCode}: ${errorMessage}`);
    this.name = 'WalletApiError';
  }
}

export class WalletApi {
  constructor(
    private readonly serviceUrl: string,
    private readonly apiKey: string,
  ) {}

  /** The order as Wallet Checkout knows it; undefined when it is not this merchant's. */
  async getOrder(orderId: string): Promise<WalletOrder | undefined> {
    const response = await this.#call('GET', `/orders/${encodeURIComponent(orderId)}`);
    if (response.status === 404) return undefined;
    return (await this.#json(response)) as WalletOrder;
  }

  /** Step 1 of the credentials flow; the credentials come later, by webhook. */
  async requestCredentials(request: CredentialsRequest, idempotencyKey: string): Promise<void> {
    await this.#json(await this.#call('POST', '/payments/credentials', request, idempotencyKey));
  }

  /** Step 5: report what the processor answered, approved or not. */
  async reportExternalResponse(report: ExternalResponse, idempotencyKey: string): Promise<void> {
    await this.#json(await this.#call('POST', '/payments/externalresponse', report, idempotencyKey));
  }

  #call(method: 'GET' | 'POST', path: string, body?: unknown, idempotencyKey?: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    // The same key on a retry replays the first answer instead of doing the work twice.
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    return fetch(`${this.serviceUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  }

  async #json(response: Response): Promise<unknown> {
    const body = (await response.json().catch(() => ({}))) as { errorCode?: string; errorMessage?: string };
    if (!response.ok) {
      throw new WalletApiError(
        response.status,
        body.errorCode ?? 'HTTP_ERROR',
        body.errorMessage ?? `Wallet Checkout answered ${response.status}`,
      );
    }
    return body;
  }
}

/** 10 s: the shopper is waiting on every one of these calls. */
const CALL_TIMEOUT_MS = 10_000;
