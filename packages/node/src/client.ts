import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WalletCheckoutConnectionError, WalletCheckoutError } from './errors.js';
import { checkOrder, type ExpectedOrder, type OrderCheck } from './orders.js';
import type {
  Account,
  AccountUpdate,
  Acknowledgement,
  AuditEvent,
  AuditEventListQuery,
  CredentialsRequest,
  CredentialsRequestInput,
  CredentialsRequestListQuery,
  ExternalResponseAcknowledgement,
  ExternalResponseInput,
  Order,
  OrderListQuery,
  RecoverInput,
  RecoverResult,
  RotatedWebhookSecret,
  SandboxSession,
  SandboxSessionInput,
  WebhookMessage,
  WebhookMessageListQuery,
  WebhookMessageSummary,
  WebhookSecretRotation,
  WebhookTestResult,
} from './types.js';

export interface WalletCheckoutOptions {
  /** A merchant API key: `sk_test_…` in staging, `sk_live_…` in production. Keep it on your server. */
  apiKey: string;
  /** Where the service runs, e.g. `https://wallet.example.com`. */
  baseUrl: string;
  /** Time-out of each attempt, in ms: 10,000 by default. */
  timeoutMs?: number;
  /** Attempts after the first for failures that are safe to repeat (see `call`): 2 by default. */
  maxRetries?: number;
}

export interface PostOptions {
  /**
   * The `Idempotency-Key` header: the service does the work of a key once and answers its repeats with
   * the first answer, for 24 hours. A random one is made when absent; give your own (for example your
   * order's id and the step) when the call may be repeated from another process or after a restart.
   */
  idempotencyKey?: string;
}

/** What the answer to a POST said beside its body. */
export interface ResponseInfo {
  /** The HTTP status of the answer. */
  status: number;
  /** The answer's `Request-Id`, which the operator can find in the service's logs. */
  requestId: string | null;
  /** The `Idempotency-Key` the call was made with: yours, or the one made for it. */
  idempotencyKey: string;
  /**
   * True when the service did no work for this call and answered with the first answer to its
   * `Idempotency-Key` (`Idempotent-Replayed: true`): the call repeated one it had already carried out.
   */
  replayed: boolean;
}

/**
 * The answer to a POST, with `lastResponse` beside its fields. `lastResponse` is not enumerable: it is
 * left out of `JSON.stringify`, spreads and `Object.keys`.
 */
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo };

/** `orders.confirm`: the order as the service knows it (null when it has none for you), paid or not. */
export type OrderConfirmation =
  | { paid: true; order: Order }
  | (Extract<OrderCheck, { paid: false }> & { order: Order | null });

/** A page of a list and whether more follow it. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** Retry delays grow from this, doubling each attempt, with up to half taken off at random. */
const FIRST_RETRY_DELAY_MS = 500;
const MAX_RETRY_DELAY_MS = 8_000;
/** A `Retry-After` longer than this is not waited out: the error is thrown instead. */
const MAX_RETRY_AFTER_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RETRIES = 2;
/** Statuses that say nothing was done, or that the service can answer the same request again. */
const RETRIED_STATUSES = new Set([408, 429, 500, 502, 503, 504]);
const API_KEY = /^sk_(test|live)_\S+$/;

type Query = Record<string, string | number | undefined>;

interface Call {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  query?: Query;
  body?: unknown;
  idempotencyKey?: string;
}

/**
 * The merchant API of Wallet Checkout for a merchant's server. Every POST but a webhook secret's rotation
 * carries an `Idempotency-Key`,
 * so that what failed without an answer, timed out, was rate limited or met a passing server error is
 * sent again safely: the service does the work of a key once. Refusals throw WalletCheckoutError with
 * the service's `errorCode` and `errorMessage`.
 */
export class WalletCheckout {
  readonly #apiKey: string;
  readonly #baseUrl: URL;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;

  constructor(options: WalletCheckoutOptions) {
    if (typeof options.apiKey !== 'string' || !API_KEY.test(options.apiKey)) {
      throw new TypeError('apiKey must be a merchant API key: sk_test_… or sk_live_….');
    }
    let baseUrl: URL;
    try {
      baseUrl = new URL(options.baseUrl);
    } catch {
      throw new TypeError('baseUrl must be an absolute http(s) URL, e.g. https://wallet.example.com.');
    }
    if (baseUrl.protocol !== 'https:' && baseUrl.protocol !== 'http:') {
      throw new TypeError('baseUrl must be an absolute http(s) URL, e.g. https://wallet.example.com.');
    }
    this.#apiKey = options.apiKey;
    this.#baseUrl = baseUrl;
    this.#timeoutMs = integerAtLeast(1, options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
    this.#maxRetries = integerAtLeast(0, options.maxRetries ?? DEFAULT_MAX_RETRIES, 'maxRetries');
  }

  readonly payments = {
    /** Asks for a card's credentials; they come by PAYMENT_CREDENTIALS webhook. */
    requestCredentials: (
      input: CredentialsRequestInput,
      options: PostOptions = {},
    ): Promise<WithResponse<Acknowledgement>> =>
      this.#post({ path: '/payments/credentials', body: input, ...options }),
    /** Reports your processor's answer to the credentials, approved or not, exactly as received. */
    reportExternalResponse: (
      input: ExternalResponseInput,
      options: PostOptions = {},
    ): Promise<WithResponse<ExternalResponseAcknowledgement>> =>
      this.#post({ path: '/payments/externalresponse', body: input, ...options }),
    /** A credentials request by the `requestId` of its acknowledgement. */
    getCredentialsRequest: (requestId: string): Promise<CredentialsRequest> =>
      this.#call({ method: 'GET', path: `/payments/credentials/${segment(requestId)}` }),
    /**
     * The credentials requests made with a `merchantReference`, newest first: the latest `limit` of them
     * (20 unless told, at most 100).
     */
    findCredentialsRequests: async (
      merchantReference: string,
      options: { limit?: number } = {},
    ): Promise<CredentialsRequest[]> => {
      const page = await this.#call<{ data: CredentialsRequest[] }>({
        method: 'GET',
        path: '/payments/credentials',
        query: { merchantReference, limit: options.limit },
      });
      return page.data;
    },
    /**
     * Every credentials request that matches, page after page, newest first: to reconcile by state or
     * creation time without knowing the references.
     *
     * @example
     * for await (const failed of wallet.payments.listCredentialsRequests({ state: 'FAILED', createdSince })) {
     *   console.log(failed.merchantReference, failed.failureReason);
     * }
     */
    listCredentialsRequests: (query: CredentialsRequestListQuery = {}): AsyncGenerator<CredentialsRequest> =>
      this.#all('/payments/credentials', query, (request) => request.requestId),
  };

  readonly orders = {
    /** An order of the default flow: confirm it here before you ship. */
    get: (orderId: string): Promise<Order> =>
      this.#call({ method: 'GET', path: `/orders/${segment(orderId)}` }),
    /** Like `get`, but undefined for an order the service has not for you (ORDER_NOT_FOUND). */
    find: async (orderId: string): Promise<Order | undefined> => {
      try {
        return await this.orders.get(orderId);
      } catch (error) {
        if (error instanceof WalletCheckoutError && error.errorCode === 'ORDER_NOT_FOUND') return undefined;
        throw error;
      }
    },
    /**
     * Whether the order is paid as your server expects it (see `checkOrder`), with the order as the
     * service knows it; an order that is not yours, or unknown, is not paid.
     */
    confirm: async (orderId: string, expected: ExpectedOrder): Promise<OrderConfirmation> => {
      const order = await this.orders.find(orderId);
      if (order === undefined) {
        return { paid: false, reason: `No order ${orderId} for this merchant.`, order: null };
      }
      const check = checkOrder(order, expected);
      return check.paid ? { paid: true, order } : { ...check, order };
    },
    /** Every order that matches, page after page, newest first. */
    list: (query: OrderListQuery = {}): AsyncGenerator<Order> =>
      this.#all('/orders', query, (order) => order.orderId),
  };

  readonly webhooks = {
    /** Every message sent or to be sent to your webhook URL that matches, newest first. */
    listMessages: (query: WebhookMessageListQuery = {}): AsyncGenerator<WebhookMessageSummary> =>
      this.#all('/webhooks/messages', query, (message) => message.id),
    /** A message with its delivery attempts (never its body). */
    getMessage: (messageId: string): Promise<WebhookMessage> =>
      this.#call({ method: 'GET', path: `/webhooks/messages/${segment(messageId)}` }),
    /** Sends a delivered or abandoned message again, with the same `webhook-id`. */
    resend: (messageId: string, options: PostOptions = {}): Promise<WithResponse<WebhookMessageSummary>> =>
      this.#post({ path: `/webhooks/messages/${segment(messageId)}/resend`, ...options }),
    /** Sends again the messages abandoned since a time (after your endpoint was down). */
    recover: (input: RecoverInput, options: PostOptions = {}): Promise<WithResponse<RecoverResult>> =>
      this.#post({ path: '/webhooks/messages/recover', body: input, ...options }),
    /** Sends one signed WEBHOOK_TEST to your webhook URL now and says how it answered. */
    test: (options: PostOptions = {}): Promise<WithResponse<WebhookTestResult>> =>
      this.#post({ path: '/webhooks/test', ...options }),
  };

  readonly auditEvents = {
    /** What was done to your merchant account, and by whom, newest first. */
    list: (query: AuditEventListQuery = {}): AsyncGenerator<AuditEvent> =>
      this.#all('/audit-events', query, (event) => event.seq),
  };

  readonly account = {
    /** Your account's settings, how many API keys are live, and the older webhook secrets still signing. */
    get: (): Promise<Account> => this.#call({ method: 'GET', path: '/account' }),
    /** Changes the settings given (webhook URL, allowed origins, shipping, tax, device memory), no others. */
    update: (changes: AccountUpdate): Promise<Account> =>
      this.#call({ method: 'PATCH', path: '/account', body: changes }),
    /**
     * A new webhook signing secret, in this answer only; older ones keep signing for `overlapSeconds`
     * (24 hours unless told, 0 after a leak). Sent without an `Idempotency-Key`: an attempt made again
     * after a failure makes another secret, the one returned.
     */
    rotateWebhookSecret: (input: WebhookSecretRotation = {}): Promise<RotatedWebhookSecret> =>
      this.#call({ method: 'POST', path: '/account/webhook-secret/rotate', body: input }),
  };

  readonly sandbox = {
    /** Staging only: a payment-carousel session for a test shopper, without the browser. */
    createSession: (
      input: SandboxSessionInput = {},
      options: PostOptions = {},
    ): Promise<WithResponse<SandboxSession>> =>
      this.#post({ path: '/sandbox/sessions', body: input, ...options }),
  };

  /**
   * A list route's items, page after page: each next page starts after the `cursor` of the last item,
   * until `hasMore` is false.
   */
  async *#all<T>(path: string, query: Query, cursor: (item: T) => string | number): AsyncGenerator<T> {
    let startingAfter: string | number | undefined;
    for (;;) {
      const page = await this.#call<Page<T>>({ method: 'GET', path, query: { ...query, startingAfter } });
      yield* page.data;
      const last = page.data.at(-1);
      if (!page.hasMore || last === undefined) return;
      startingAfter = cursor(last);
    }
  }

  /** A GET's answer, or that of a call that takes no `Idempotency-Key`. */
  async #call<T>(call: Call): Promise<T> {
    return (await this.#exchange<T>(call)).body;
  }

  /** A POST's answer, with the `lastResponse` that says whether it was a replay. */
  async #post<T extends object>(call: Omit<Call, 'method'>): Promise<WithResponse<T>> {
    const idempotencyKey = call.idempotencyKey ?? randomUUID();
    const { body, response } = await this.#exchange<T>({ ...call, method: 'POST', idempotencyKey });
    const lastResponse: ResponseInfo = {
      status: response.status,
      requestId: response.headers.get('request-id'),
      idempotencyKey,
      replayed: response.headers.get('idempotent-replayed') === 'true',
    };
    return Object.defineProperty(body, 'lastResponse', {
      value: lastResponse,
      enumerable: false,
    }) as WithResponse<T>;
  }

  /**
   * One call, attempted again after a failure without an answer, a 429 (after its `Retry-After`), a
   * 408, 500, 502, 503 or 504, or a 409 IDEMPOTENCY_REQUEST_IN_PROGRESS, up to `maxRetries` times: every
   * attempt of a POST carries the same `Idempotency-Key`.
   */
  async #exchange<T>(call: Call): Promise<{ body: T; response: Response }> {
    // Under the base URL's own path, if it has one (a service behind a path prefix).
    const url = new URL(`${this.#baseUrl.pathname.replace(/\/$/, '')}${call.path}`, this.#baseUrl);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: 'application/json',
    };
    const idempotencyKey = call.idempotencyKey ?? null;
    if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);

    for (let attempt = 0; ; attempt++) {
      const retriesLeft = attempt < this.#maxRetries;
      let response: Response;
      let text: string;
      try {
        // The time-out covers the whole exchange, the answer's body included.
        response = await fetch(url, {
          method: call.method,
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
        text = await response.text();
      } catch (error) {
        if (retriesLeft) {
          await sleep(backoff(attempt));
          continue;
        }
        throw new WalletCheckoutConnectionError(
          `${call.method} ${call.path}: no answer from ${this.#baseUrl.origin} after ${attempt + 1} attempt(s): ${describe(error)}`,
          idempotencyKey,
          { cause: error },
        );
      }
      if (response.status >= 200 && response.status < 300) {
        return { body: JSON.parse(text) as T, response };
      }
      const failure = refusal(response, text);
      const wait = retriesLeft ? retryDelay(response, failure, attempt) : undefined;
      if (wait === undefined) throw failure;
      await sleep(wait);
    }
  }
}

/** The service's `{ errorCode, errorMessage }`, or what a proxy in between answered instead. */
function refusal(response: Response, text: string): WalletCheckoutError {
  const requestId = response.headers.get('request-id');
  let body: { errorCode?: unknown; errorMessage?: unknown } = {};
  try {
    body = JSON.parse(text) ?? {};
  } catch {}
  if (typeof body.errorCode === 'string' && typeof body.errorMessage === 'string') {
    return new WalletCheckoutError(response.status, body.errorCode, body.errorMessage, requestId);
  }
  return new WalletCheckoutError(
    response.status,
    `HTTP_${response.status}`,
    `The answer was HTTP ${response.status} without an error body: ${text.slice(0, 200)}`,
    requestId,
  );
}

/** How long to wait before the next attempt, or undefined when the failure is not one to repeat. */
function retryDelay(response: Response, failure: WalletCheckoutError, attempt: number): number | undefined {
  if (response.status === 409) {
    return failure.errorCode === 'IDEMPOTENCY_REQUEST_IN_PROGRESS' ? backoff(attempt) : undefined;
  }
  if (!RETRIED_STATUSES.has(response.status)) return undefined;
  const retryAfter = Number(response.headers.get('retry-after'));
  if (response.status === 429 && Number.isFinite(retryAfter) && retryAfter > 0) {
    const ms = retryAfter * 1000;
    return ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
  }
  return backoff(attempt);
}

function backoff(attempt: number): number {
  const full = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** attempt);
  return full / 2 + Math.random() * (full / 2);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError') return 'timed out';
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/** An id as one path segment, so that `../` or `?` in it cannot reach another route. */
function segment(id: string): string {
  if (typeof id !== 'string' || id === '') throw new TypeError('The id must be a non-empty string.');
  return encodeURIComponent(id);
}

function integerAtLeast(min: number, value: number, name: string): number {
  if (!Number.isInteger(value) || value < min)
    throw new TypeError(`${name} must be an integer of at least ${min}.`);
  return value;
}
