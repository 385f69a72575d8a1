/**
 * One delivery attempt over HTTP: resolve the endpoint, build and sign the body, POST it through a
 * cached undici pool, and describe the outcome for the attempt record. Knows nothing of the database.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { scrub } from '../log.js';
import { Signer } from './signing.js';
import { checkWebhookUrl, guardedConnector, guardedLookup, type WebhookDestinations } from './url-guard.js';

export interface WebhookEndpoint {
  url: string | null;
  /** Every secret that should sign: the current one and, during a rotation overlap, the old ones. */
  secrets: string[];
}

export interface MessageForPayload {
  id: string;
  merchantId: string;
  eventName: string;
  subjectId: string;
}

export interface AttemptOutcome {
  /** Null when no response arrived. */
  statusCode: number | null;
  /** Time of the HTTP exchange, in ms; 0 when no request was sent. */
  latencyMs: number;
  /** Null exactly when the receiver answered 2xx; otherwise scrubbed text for the attempt record. */
  error: string | null;
  /**
   * Whether the receiver kept the attempt for the whole time-out: no complete answer within it, or a 2xx
   * (which counts) whose body was still coming when it ended. Such a receiver gets fewer delivery slots.
   */
  timedOut: boolean;
  /**
   * Not sent: the attempt waited for a connection to its receiver until it could no longer end within
   * its message's lease (`sendBy`). It is no attempt: the lease runs out and the message is taken again.
   */
  leaseRanOut?: true;
}

/**
 * What the dispatcher asks to make one attempt: the Sender below in this thread, or a WorkerSender that
 * hands the attempt to the delivery worker thread.
 */
export interface AttemptSender {
  /** Gets ready to send, and resolves once it can; called when the dispatcher starts. */
  start(): Promise<void>;
  /**
   * One attempt; never throws. `error` is null exactly when the receiver answered 2xx. `sendBy`, on the
   * clock of `attemptedAt`: the latest time the request may leave and still end within its lease.
   */
  attempt(
    message: MessageForPayload,
    endpoint: Promise<WebhookEndpoint>,
    attemptedAt: number,
    sendBy?: number,
  ): Promise<AttemptOutcome>;
  /** Stops once the attempts under way have ended. */
  close(): Promise<void>;
}

export interface SenderOptions {
  destinations: WebhookDestinations;
  timeoutMs: number;
  payloads: { build(message: MessageForPayload): Promise<unknown> };
  /** Connections this sender opens per receiver origin; CONNECTIONS_PER_ORIGIN when absent. */
  connectionsPerOrigin?: number;
}

/**
 * Connections per receiver origin from one process: 32 carry ~100k requests/s to a receiver answering in
 * 0.3 ms, and a slow receiver never sees more than 32 at once. Several delivery threads share them out.
 */
export const CONNECTIONS_PER_ORIGIN = 32;
/** Receivers' answers are read and thrown away up to 64 KiB; a longer body closes the connection. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const MAX_ERROR_LENGTH = 500;
/** Open pools kept; the least recently used is closed beyond this. */
const MAX_POOLS = 1_000;

/** An attempt waiting for one of its origin's connections. */
interface Waiter {
  /** When it began to wait (performance.now()). */
  since: number;
  /** Hands it a connection. */
  take(): void;
  /** Ends it without sending. */
  refuse(error: Error): void;
}

/**
 * A receiver origin: its pool, and the attempts holding or waiting for one of its connections. Attempts
 * wait here, not in the pool's queue, so that an attempt's deadline starts when it has a connection: the
 * time-out is the receiver's, not the time spent behind other attempts to the same receiver.
 */
interface Origin {
  pool: Pool;
  /** Attempts holding a connection, at most the sender's connections per origin. */
  active: number;
  /** Attempts waiting for a connection, first come first served. */
  waiting: Waiter[];
}

/** A failure before or instead of an HTTP answer, with a message fit for the attempt record. */
class DeliveryFailure extends Error {}

class DeliveryTimeout extends Error {
  override readonly name = 'TimeoutError';
}

class LeaseRanOut extends Error {}

const TIMED_OUT =
  /^((No complete response|Could not connect) within \d+ ms|Not sent: .* got no complete response within \d+ ms)\.$/;

/** Whether an attempt's recorded error (from `describeFailure`) says the receiver ran out of time. */
export function isTimeout(error: string | null): boolean {
  return error !== null && TIMED_OUT.test(error);
}

/** Text for the attempt record of a failure before or instead of an HTTP answer. */
export function describeFailure(error: unknown, timeoutMs: number): string {
  const { code, name, syscall, address } = (error ?? {}) as Record<string, unknown>;
  const message = error instanceof Error ? error.message : String(error);
  let text = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  if (typeof code === 'string' && typeof syscall === 'string' && typeof address === 'string') {
    // Node's socket errors name the address dialled (`connect ECONNREFUSED 10.1.2.3:443`): what a name
    // resolved to, which is not the merchant's to learn.
    text = `${code}: ${syscall} to the webhook URL's host failed`;
  }
  if (name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    text = `No complete response within ${timeoutMs} ms.`;
  } else if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    text = `Could not connect within ${timeoutMs} ms.`;
  }
  return scrub(text).slice(0, MAX_ERROR_LENGTH);
}

export class Sender implements AttemptSender {
  readonly #destinations: WebhookDestinations;
  readonly #timeoutMs: number;
  readonly #payloads: SenderOptions['payloads'];
  readonly #connections: number;
  readonly #signer = new Signer();
  /** By origin, least recently used first. */
  readonly #origins = new Map<string, Origin>();
  /** Every origin's connections look names up through this one, so overlapping lookups of a name are one. */
  readonly #lookup: ReturnType<typeof guardedLookup>;

  constructor(options: SenderOptions) {
    this.#destinations = options.destinations;
    this.#lookup = guardedLookup(options.destinations);
    this.#timeoutMs = options.timeoutMs;
    this.#payloads = options.payloads;
    this.#connections = options.connectionsPerOrigin ?? CONNECTIONS_PER_ORIGIN;
  }

  /** Nothing to prepare: a pool opens with the first request to its origin. */
  async start(): Promise<void> {}

  /** One HTTP attempt; never throws. `error` is null exactly when the receiver answered 2xx. */
  async attempt(
    message: MessageForPayload,
    endpoint: Promise<WebhookEndpoint>,
    attemptedAt: number,
    sendBy = Number.POSITIVE_INFINITY,
  ): Promise<AttemptOutcome> {
    const begun = performance.now();
    let statusCode: number | null = null;
    let started: number | undefined;
    let error: string | null = null;
    let bodyCut = false;
    let deadline: NodeJS.Timeout | undefined;
    let origin: Origin | undefined;
    let leaseRanOut: true | undefined;
    try {
      const { url, secrets } = await endpoint;
      if (url === null) throw new DeliveryFailure('The merchant has no webhook URL configured.');
      if (secrets.length === 0) throw new DeliveryFailure('The merchant has no active webhook secret.');
      const target = checkWebhookUrl(url, this.#destinations);
      const body = await this.#body(message);
      const queued = performance.now();
      origin = await this.#connection(target.origin);
      // Sent later, it could still be under way when the lease ends and another process sends it too.
      if (attemptedAt + (performance.now() - begun) > sendBy) {
        throw new LeaseRanOut('Not sent: it waited for a connection to the receiver past its lease.');
      }
      started = performance.now();
      // Signed when it leaves, not when it queued: a receiver refuses a `webhook-timestamp` that is
      // minutes old, and an attempt may wait that long behind others to a slow receiver.
      const signedAt = new Date(attemptedAt + (started - queued));
      const headers = this.#signer.headers(message.id, signedAt, body, secrets);
      // One deadline for the whole exchange. undici's own header and body time-outs run on a coarse
      // clock (up to a second late) and each restarts; they stay as a backstop. A controller and a timer
      // cost about 0.3 µs where AbortSignal.timeout costs about 5 µs.
      const controller = new AbortController();
      deadline = setTimeout(() => controller.abort(new DeliveryTimeout()), this.#timeoutMs);
      const { signal } = controller;
      const response = await origin.pool.request({
        method: 'POST',
        path: `${target.pathname}${target.search}`,
        headers,
        body,
        signal,
      });
      statusCode = response.statusCode;
      // The status line decides: a receiver that answered 2xx has the message however its body ends (cut
      // off, or trickling past the deadline), and the body is read only to free the connection.
      await response.body.dump({ limit: MAX_RESPONSE_BYTES, signal }).catch(() => undefined);
      bodyCut = signal.aborted;
      if (statusCode < 200 || statusCode > 299) {
        error =
          statusCode >= 300 && statusCode < 400
            ? `HTTP ${statusCode}: redirects are not followed; configure the final URL.`
            : `HTTP ${statusCode}`;
      }
    } catch (caught) {
      error = describeFailure(caught, this.#timeoutMs);
      if (caught instanceof LeaseRanOut) leaseRanOut = true;
    } finally {
      clearTimeout(deadline);
    }
    const timedOut = bodyCut || isTimeout(error);
    if (origin) this.#release(origin, timedOut);
    const latencyMs = started === undefined ? 0 : Math.round(performance.now() - started);
    if (leaseRanOut) return { statusCode, latencyMs, error, timedOut, leaseRanOut };
    return { statusCode, latencyMs, error, timedOut };
  }

  async #body(message: MessageForPayload): Promise<string> {
    let body: string | undefined;
    try {
      const payload = await this.#payloads.build({
        id: message.id,
        merchantId: message.merchantId,
        eventName: message.eventName,
        subjectId: message.subjectId,
      });
      body = JSON.stringify(payload);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new DeliveryFailure(`The ${message.eventName} payload could not be built: ${reason}`);
    }
    if (body === undefined) throw new DeliveryFailure(`No payload is built for ${message.eventName}.`);
    return body;
  }

  /**
   * Resolves once one of the origin's connections is this attempt's; `#release` gives it back. Rejects
   * when the connection it waited for was held by an attempt that timed out and it had waited half a
   * time-out already (see `#release`).
   */
  async #connection(key: string): Promise<Origin> {
    const origin = this.#origin(key);
    if (origin.active < this.#connections) {
      origin.active++;
      return origin;
    }
    // `#release` hands its connection over without counting it free in between.
    await new Promise<void>((take, refuse) =>
      origin.waiting.push({ since: performance.now(), take, refuse }),
    );
    return origin;
  }

  /**
   * Gives a connection back to the next attempt waiting for one, or frees it. After a time-out, the
   * attempts that have waited half a time-out or more end unsent: they are behind a receiver that has
   * stopped answering, and would each hold a delivery slot for another whole time-out once their turn
   * came. Those that began to wait more recently (a receiver that leaves the odd request hanging and
   * answers the rest) keep their turn.
   */
  #release(origin: Origin, timedOut: boolean): void {
    if (timedOut) {
      const now = performance.now();
      while (origin.waiting.length > 0 && now - (origin.waiting[0] as Waiter).since >= this.#timeoutMs / 2) {
        (origin.waiting.shift() as Waiter).refuse(
          new DeliveryFailure(
            `Not sent: an earlier attempt to this receiver got no complete response within ${this.#timeoutMs} ms.`,
          ),
        );
      }
    }
    const next = origin.waiting.shift();
    if (next) next.take();
    else origin.active--;
  }

  #origin(key: string): Origin {
    let origin = this.#origins.get(key);
    if (origin !== undefined) {
      // Re-inserted so the map's order is least recently used first.
      this.#origins.delete(key);
      this.#origins.set(key, origin);
      return origin;
    }
    const pool = new Pool(key, {
      connections: this.#connections,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      connect: guardedConnector(this.#destinations, { timeout: this.#timeoutMs }, this.#lookup),
    });
    origin = { pool, active: 0, waiting: [] };
    this.#origins.set(key, origin);
    if (this.#origins.size > MAX_POOLS) {
      // The least recently used origin that no attempt is using or waiting for.
      for (const [oldKey, old] of this.#origins) {
        if (old.active > 0) continue;
        this.#origins.delete(oldKey);
        void old.pool.close();
        break;
      }
    }
    return origin;
  }

  /** Closes every pool once the requests under way have finished. */
  async close(): Promise<void> {
    const origins = [...this.#origins.values()];
    this.#origins.clear();
    await Promise.all(origins.map((origin) => origin.pool.close()));
  }
}
