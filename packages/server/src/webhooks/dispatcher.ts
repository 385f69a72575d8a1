/**
 * Delivers webhook messages: signed POSTs over undici, retried on a schedule, every attempt recorded.
 *
 * How a message reaches a dispatcher, fastest first:
 * 1. `committed(rows)` right after the outbox transaction commits: the first attempt starts at once.
 * 2. A timer set for the earliest retry this process knows of.
 * 3. A PostgreSQL NOTIFY from another process (resend, or a process that could not deliver itself).
 * 4. The poll every `pollIntervalMs`: the safety net for everything else, including messages whose
 *    lease ran out because the process that held them died.
 * Every path but the first claims through `WebhookRepo.claimDue`, so two processes never hold the same
 * message at once. Results are written in batches: one transaction per flush, not one per delivery.
 * The attempts themselves are made by an AttemptSender: a Sender in this thread, or the WorkerSender,
 * which hands them to the delivery worker thread; this class keeps the state and every write either way.
 * Its delivery slots are shared out among receivers by ReceiverShares (shares.ts), and processes wake
 * each other through WakeUps (wake-ups.ts).
 */
import type { Db } from '../db/index.js';
import { FailureLog } from '../failure-log.js';
import { newId } from '../ids.js';
import type { Logger } from '../log.js';
import type { DeliveryOutcome } from '../metrics.js';
import type { RetrySchedule, WebhookMessageRow } from './outbox.js';
import { type AttemptResult, type LeasedMessage, toLeased, WebhookRepo } from './repo.js';
import { nextDelayMs } from './schedule.js';
import {
  type AttemptSender,
  CONNECTIONS_PER_ORIGIN,
  type MessageForPayload,
  Sender,
  type WebhookEndpoint,
} from './sender.js';
import { ReceiverShares } from './shares.js';
import { type MessageState, transition } from './state.js';
import type { WebhookDestinations } from './url-guard.js';
import { WakeUps } from './wake-ups.js';

export type { AttemptOutcome, AttemptSender, MessageForPayload, WebhookEndpoint } from './sender.js';

/** What a stopping dispatcher did with the messages it held. */
export interface DispatcherStop {
  /** Messages not yet started, given back to the outbox for any process to deliver. */
  handedBack: number;
  /** Attempts under way when it stopped, each waited for until it ended (at most WEBHOOK_TIMEOUT_MS). */
  attemptsFinished: number;
}

export interface DispatcherOptions {
  db: Db;
  log: Logger;
  /** Where webhooks may go; used when no `sender` is given. */
  destinations: WebhookDestinations;
  /** Time allowed to connect, to receive the response headers, and between body chunks, in ms. */
  timeoutMs: number;
  retryDelaysMs: Record<RetrySchedule, number[]>;
  endpoints: { resolve(merchantId: string): Promise<WebhookEndpoint> };
  /**
   * Builds the body at delivery time; it may hold card data, so it is never stored or logged. It must
   * give the same body for the same message on every attempt. Used when no `sender` is given.
   */
  payloads?: { build(message: MessageForPayload): Promise<unknown> };
  /**
   * Makes the attempts instead of a Sender in this thread built from `payloads`: the WorkerSender, which
   * hands them to the delivery worker thread (it builds its own payloads).
   */
  sender?: AttemptSender;
  /** How long a dispatcher owns a message it took, in ms; another may take it over afterwards. */
  leaseMs?: number;
  pollIntervalMs?: number;
  /** Deliveries in flight at once. */
  concurrency?: number;
  /**
   * Deliveries in flight at once to one receiver (the origin of a webhook URL, however many merchants use
   * it); the rest of `concurrency` serves the others.
   */
  perReceiver?: number;
  /**
   * The same for a receiver whose last attempt timed out, until it answers again; and what every receiver
   * may have in flight out of the slots kept for receivers below it (see shares.ts).
   */
  perSlowReceiver?: number;
  now?: () => number;
  /** Told of every attempt: the message's event, what became of it, and how long the receiver took. */
  metrics?: { attempt(event: string, outcome: DeliveryOutcome, seconds: number): void };
}

/** 5 s: a crashed process's messages and other processes' retries wait at most this long. */
const DEFAULT_POLL_INTERVAL_MS = 5_000;
/** 512 deliveries in flight per process: four receivers' shares. */
const DEFAULT_CONCURRENCY = 512;
/**
 * 128, four times a process's connections to one origin. The sender keeps three attempts ready for each
 * connection, so none idles while results travel back from a delivery thread and new attempts out to it
 * (with two attempts a connection, a backlog drained 9 % slower; with four, within 2 % of no limit). A
 * receiver that hangs until every time-out holds a quarter of the slots: the others keep the rest.
 */
const DEFAULT_PER_RECEIVER = 4 * CONNECTIONS_PER_ORIGIN;
/**
 * 8 for a receiver whose last attempt timed out: a hanging receiver holds a quarter of the slots for one
 * time-out at most, then 8, so that 64 of them would have to hang at once to fill a process's slots.
 * Also what any receiver may start out of the slots kept free (see shares.ts): 8 attempts at once carry
 * thousands of deliveries a second to a receiver that answers in a few milliseconds.
 */
const DEFAULT_PER_SLOW_RECEIVER = 8;
/** Messages claimed ahead of free delivery slots, as a multiple of concurrency. */
const QUEUE_FACTOR = 2;
/**
 * Messages this process committed itself and may hold, waiting for a delivery slot. 50,000 (about five
 * seconds of acknowledgements at full speed, some 15 MiB, started well within the default 30 s lease at
 * the slowest delivery rate measured, 2,000/s): a burst stays with the process that committed it,
 * instead of costing a commit to give the leases back and claims to take them again, each of which
 * walks past every message held (3 to 10 ms each under load).
 */
const MAX_COMMITTED_HELD = 50_000;
/** Rows per claim and per result flush: at most 3,500 bind parameters a statement, far below both limits. */
const BATCH = 500;
/**
 * 20 ms: results wait this long for others to share their commit (an fsync, which stalls the event loop
 * on SQLite); nothing waits on them meanwhile.
 */
const FLUSH_DELAY_MS = 20;
/** 1 s: pause before writing results again after the database refused a flush. */
const FLUSH_RETRY_MS = 1_000;
/** An attempt's outcome, by the state it leaves its message in. */
const OUTCOMES: Record<MessageState, DeliveryOutcome> = {
  DELIVERED: 'delivered',
  PENDING: 'retrying',
  FAILED: 'failed',
};
/** 5 s: at most this much of a lease is kept, after the time-out, for writing the attempt's result. */
const RESULT_MARGIN_MS = 5_000;

export class Dispatcher {
  readonly leaseMs: number;
  /**
   * How long before its lease ends an attempt's request must have left (see `AttemptSender.attempt`):
   * the time-out and a margin for the result. Undefined for a lease no longer than the time-out (given
   * in the options; WEBHOOK_LEASE_MS cannot be), which then bounds nothing.
   */
  readonly #sendBeforeLeaseEndMs: number | undefined;
  readonly #log: Logger;
  /** The database's failures, which repeat on every poll and flush while it cannot be reached. */
  readonly #failures: FailureLog;
  readonly #delays: Record<RetrySchedule, number[]>;
  readonly #endpoints: DispatcherOptions['endpoints'];
  readonly #pollIntervalMs: number;
  readonly #shares: ReceiverShares;
  readonly #now: () => number;
  readonly #repo: WebhookRepo;
  readonly #sender: AttemptSender;
  readonly #metrics: DispatcherOptions['metrics'];

  #running = false;
  /** Leased, waiting for a delivery slot. */
  #queue: LeasedMessage[] = [];
  /** Index of the next message to start: taking from the front of a long array would copy the rest. */
  #queueHead = 0;
  /** Held by this process, by id: from the lease until the result is written. */
  readonly #held = new Map<string, LeasedMessage>();
  readonly #deliveries = new Set<Promise<void>>();
  /** Messages of merchants whose receiver is being looked up, by merchant. */
  readonly #unresolved = new Map<string, LeasedMessage[]>();
  /** Claims and reads under way, which stop() lets finish before handing back what they took. */
  readonly #tasks = new Set<Promise<void>>();
  #results: AttemptResult[] = [];
  #flushing: Promise<void> | undefined;
  /**
   * The end of this process's last claim or result write: each waits for the one before. A claim that
   * took back a message whose result was being written (its lease having run out meanwhile) would move
   * the lease the write is fenced by: the result would be lost and the message sent again.
   */
  #lastTurn: Promise<unknown> = Promise.resolve();
  #committed: LeasedMessage[] = [];
  #committedScheduled = false;
  /** Messages let go unsent, too late to start under their lease: handed back together (see `#lapse`). */
  #lapsed: LeasedMessage[] = [];
  #lapsedScheduled = false;
  #polling = false;
  #pollAgain = false;
  /** The last claim filled its batch: more messages are due than this process took. */
  #backlog = false;
  #pollTimer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #retryAt: number | undefined;
  readonly #wakeUps: WakeUps;

  constructor(options: DispatcherOptions) {
    this.#log = options.log;
    this.#failures = new FailureLog(options.log);
    this.#delays = options.retryDelaysMs;
    this.#endpoints = options.endpoints;
    // The time-out plus 15 s for building the payload and writing the result (as WEBHOOK_LEASE_MS): a
    // lease shorter than a delivery would let a second process send the message while the first is at it.
    this.leaseMs = options.leaseMs ?? options.timeoutMs + 15_000;
    const spare = this.leaseMs - options.timeoutMs;
    this.#sendBeforeLeaseEndMs =
      spare > 0 ? options.timeoutMs + Math.min(RESULT_MARGIN_MS, spare / 2) : undefined;
    this.#pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.#shares = new ReceiverShares({
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      perReceiver: options.perReceiver ?? DEFAULT_PER_RECEIVER,
      perSlowReceiver: options.perSlowReceiver ?? DEFAULT_PER_SLOW_RECEIVER,
    });
    this.#now = options.now ?? Date.now;
    this.#metrics = options.metrics;
    this.#repo = new WebhookRepo(options.db);
    this.#wakeUps = new WakeUps({ db: options.db, log: options.log, onWake: () => this.#pollSoon() });
    const { sender, payloads } = options;
    if (sender) {
      this.#sender = sender;
    } else if (payloads) {
      this.#sender = new Sender({
        destinations: options.destinations,
        timeoutMs: options.timeoutMs,
        payloads,
      });
    } else {
      throw new TypeError('A Dispatcher needs either payloads or a sender.');
    }
  }

  /**
   * Starts delivering, and resolves once the sender can send, so that a service that listens only then
   * sends its first webhook without waiting for a delivery thread to load.
   */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    const senderReady = this.#sender.start();
    this.#pollTimer = setInterval(() => this.#pollSoon(), this.#pollIntervalMs);
    this.#pollTimer.unref();
    await this.#wakeUps.listen();
    this.#pollSoon();
    await senderReady;
  }

  /**
   * Stops taking work, hands back messages not yet started, and waits for deliveries in flight. Tells how
   * many messages went back to the outbox and how many attempts it waited for.
   */
  async stop(): Promise<DispatcherStop> {
    if (!this.#running) return { handedBack: 0, attemptsFinished: 0 };
    this.#running = false;
    clearInterval(this.#pollTimer);
    clearTimeout(this.#retryTimer);
    this.#retryAt = undefined;
    await this.#wakeUps.unlisten();
    while (this.#tasks.size > 0) await Promise.all(this.#tasks);
    const unstarted = [
      ...this.#queue.slice(this.#queueHead),
      ...this.#shares.takeSetAside(),
      ...[...this.#unresolved.values()].flat(),
    ];
    this.#queue = [];
    this.#queueHead = 0;
    this.#unresolved.clear();
    for (const message of unstarted) this.#letGo(message.id, message.leaseUntil);
    const handedBack = await this.#handBack(unstarted);
    const attemptsFinished = this.#deliveries.size;
    while (this.#deliveries.size > 0) await Promise.all(this.#deliveries);
    await this.#handBackLapsed();
    await this.#flush();
    await this.#sender.close();
    this.#failures.flush();
    return { handedBack, attemptsFinished };
  }

  /** Attempts in flight, and messages held: in flight, waiting for a slot, or with results not yet written. */
  load(): { inFlight: number; held: number } {
    return { inFlight: this.#deliveries.size, held: this.#held.size };
  }

  /**
   * The lease to write on an outbox row about to commit (see newMessage): this process's own while its
   * dispatcher runs, so that it starts the first attempt at once; 0 in a process that does not deliver
   * (`WEBHOOK_DISPATCH=off`), so that any dispatcher may claim the row and nothing has to be handed back.
   */
  leaseForNew(): number {
    return this.#running ? this.leaseMs : 0;
  }

  /**
   * Call with the outbox rows right after the transaction that inserted them commits. A running
   * dispatcher starts their first attempts at once. Rows without a lease wake the other processes; rows
   * leased by a dispatcher that has stopped since are given back first, so that no message waits for a
   * lease to run out. The rows are taken as inserted, not read back: while its lease runs, a fresh
   * PENDING row is this process's alone.
   */
  committed(rows: readonly WebhookMessageRow[]): void {
    if (rows.length === 0) return;
    for (const row of rows) this.#committed.push(toLeased(row));
    if (this.#committedScheduled) return;
    this.#committedScheduled = true;
    // setImmediate: the rows of every request committed in this turn of the event loop start together.
    setImmediate(() => this.#track(this.#takeCommitted()));
  }

  /** Claims due messages now, here and (on PostgreSQL) in every other process. */
  wake(): void {
    this.#pollSoon();
    void this.#wakeUps.notify();
  }

  async #takeCommitted(): Promise<void> {
    this.#committedScheduled = false;
    const now = this.#now();
    const committed = this.#committed;
    this.#committed = [];
    // A lease of 0 (see leaseForNew) leaves the message to any dispatcher: wake them to claim it now.
    if (committed.some((message) => message.leaseUntil <= now)) await this.#wakeUps.notify();
    const messages = committed.filter((message) => message.leaseUntil > now && !this.#held.has(message.id));
    if (!this.#running) {
      await this.#handBack(messages);
      return;
    }
    const overflow = messages.splice(Math.max(MAX_COMMITTED_HELD - this.#held.size, 0));
    this.#enqueue(messages);
    if (overflow.length === 0) return;
    // Claim again as soon as there is room, should no other process take them first.
    this.#backlog = true;
    await this.#handBack(overflow);
  }

  /**
   * Gives leases back and wakes every process, so that whoever has room delivers at once. Tells how many
   * went back: none when the write failed.
   */
  async #handBack(messages: LeasedMessage[]): Promise<number> {
    if (messages.length === 0) return 0;
    try {
      await this.#repo.release(messages, this.#now());
    } catch (error) {
      this.#failures.failed(error, 'could not hand back webhook messages; their leases will run out');
      return 0;
    }
    await this.#wakeUps.notify();
    return messages.length;
  }

  #pollSoon(): void {
    if (!this.#running) return;
    if (this.#polling) {
      this.#pollAgain = true;
      return;
    }
    this.#polling = true;
    this.#track(
      this.#poll().finally(() => {
        this.#polling = false;
        if (this.#pollAgain) {
          this.#pollAgain = false;
          this.#pollSoon();
        }
      }),
    );
  }

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  /** How many more messages this process may hold: in flight plus queued stays within the bound. */
  #room(): number {
    return this.#shares.concurrency * QUEUE_FACTOR - this.#deliveries.size - this.#queued();
  }

  async #poll(): Promise<void> {
    const limit = Math.min(this.#room(), BATCH);
    if (limit <= 0) {
      // Full: a delivery that ends will poll again once there is room for a worthwhile batch.
      this.#backlog = true;
      return;
    }
    try {
      const now = this.#now();
      const skip = this.#shares.saturated();
      const claimed = await this.#inTurn(async () => {
        const messages = await this.#repo.claimDue(now, this.leaseMs, limit, skip);
        return { count: messages.length, fresh: messages.filter((message) => !this.#adoptLease(message)) };
      });
      this.#backlog = claimed.count === limit;
      this.#enqueue(claimed.fresh);
      // Messages set aside for a receiver at its share leave room: claim again, for the other merchants.
      if (this.#backlog && this.#room() >= Math.min(this.#shares.concurrency, BATCH)) this.#pollSoon();
      if (!this.#backlog) {
        const next = await this.#repo.firstDueAt(now);
        if (next !== undefined) this.#armRetryTimer(next);
      }
    } catch (error) {
      this.#failures.failed(error, 'could not claim due webhook messages');
    }
  }

  /** Polls when the retry due at `at` comes, unless an earlier timer or the regular poll comes first. */
  #armRetryTimer(at: number): void {
    const delay = Math.max(at - this.#now(), 0);
    if (!this.#running || delay >= this.#pollIntervalMs) return;
    if (this.#retryAt !== undefined && this.#retryAt <= at) return;
    clearTimeout(this.#retryTimer);
    this.#retryAt = at;
    this.#retryTimer = setTimeout(() => {
      this.#retryAt = undefined;
      this.#pollSoon();
    }, delay);
    this.#retryTimer.unref();
  }

  /**
   * Whether `claimed` is a message this process still holds, queued, in flight or with its result not
   * yet written, whose lease ran out (a result write that waited, a loaded machine): it then carries on
   * under the lease the claim just wrote, so that its result is not fenced out, leaving the message to be
   * sent again a lease later. Not when the row moved on meanwhile (see `LeasedMessage.nextAttemptAt`):
   * another process took it over, and perhaps delivered it before a resend, so what this one holds is
   * stale. The claim then starts afresh, and the stale result keeps the old lease, which fences it out.
   */
  #adoptLease(claimed: LeasedMessage): boolean {
    const held = this.#held.get(claimed.id);
    if (held === undefined) return false;
    if (held.attemptCount !== claimed.attemptCount || held.nextAttemptAt !== claimed.nextAttemptAt) {
      return false;
    }
    held.leaseUntil = claimed.leaseUntil;
    for (const result of this.#results) {
      if (result.messageId === claimed.id) result.leaseUntil = claimed.leaseUntil;
    }
    return true;
  }

  #enqueue(messages: LeasedMessage[]): void {
    for (const message of messages) {
      this.#held.set(message.id, message);
      this.#queue.push(message);
    }
    this.#pump();
  }

  #queued(): number {
    return this.#queue.length - this.#queueHead;
  }

  #take(): LeasedMessage {
    const message = this.#queue[this.#queueHead++] as LeasedMessage;
    // Drop the taken part once it is most of the array, so the array stays within twice what waits.
    if (this.#queueHead > 1_024 && this.#queueHead * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueHead);
      this.#queueHead = 0;
    }
    return message;
  }

  /** `endpoints`: lookups already made, by merchant; one per merchant for the messages started together. */
  #pump(endpoints = new Map<string, Promise<WebhookEndpoint>>()): void {
    if (!this.#running) return;
    const claimAgain = this.#shares.startReady((message, receiver) => {
      if (this.#live(message)) this.#start(message, receiver, endpoints);
    });
    if (claimAgain) this.#pollSoon();
    while (this.#shares.hasSlot() && this.#queued() > 0) {
      const message = this.#take();
      if (!this.#live(message)) continue;
      const receiver = this.#shares.receiverOf(message.merchantId);
      if (receiver === undefined) this.#resolveReceiver(message);
      else if (this.#shares.mayStart(receiver) && !this.#shares.hasSetAside(receiver)) {
        this.#start(message, receiver, endpoints);
      } else this.#shares.setAside(receiver, message);
    }
  }

  /**
   * Holds a message of a merchant not seen before (or forgotten) until its endpoint says which receiver
   * it shares: counting it against the merchant alone first would let many merchants on one hanging
   * endpoint take a share each.
   */
  #resolveReceiver(message: LeasedMessage): void {
    const { merchantId } = message;
    const held = this.#unresolved.get(merchantId);
    if (held !== undefined) {
      held.push(message);
      return;
    }
    this.#unresolved.set(merchantId, [message]);
    this.#track(this.#placeUnresolved(merchantId));
  }

  async #placeUnresolved(merchantId: string): Promise<void> {
    const endpoint = this.#endpoints.resolve(merchantId);
    let url: string | null = null;
    try {
      ({ url } = await endpoint);
    } catch {
      // The attempt reports the failed lookup; until then the merchant counts alone.
    }
    const receiver = this.#shares.learn(merchantId, url);
    for (const message of this.#unresolved.get(merchantId) ?? []) {
      this.#shares.setAside(receiver, message, true);
    }
    this.#unresolved.delete(merchantId);
    // The attempts use the endpoint just looked up.
    this.#pump(new Map([[merchantId, endpoint]]));
  }

  /**
   * Whether a message's lease leaves time to send it (see `#sendBeforeLeaseEndMs`); one that waited past
   * that is let go, as its attempt would be.
   */
  #live(message: LeasedMessage): boolean {
    if (message.leaseUntil - (this.#sendBeforeLeaseEndMs ?? 0) > this.#now()) return true;
    this.#lapse(message);
    return false;
  }

  /**
   * Lets go of a message that can no longer be sent under its lease, and gives the lease back rather than
   * let it run out: behind a receiver slower than this process's connections to it can serve, the rest
   * of a claim would otherwise wait the whole lease before any process could take it again. The messages
   * let go in one turn of the event loop go back in one write, which wakes every process.
   */
  #lapse(message: LeasedMessage): void {
    this.#letGo(message.id, message.leaseUntil);
    this.#lapsed.push(message);
    if (this.#lapsedScheduled) return;
    this.#lapsedScheduled = true;
    setImmediate(() => this.#track(this.#handBackLapsed()));
  }

  async #handBackLapsed(): Promise<void> {
    this.#lapsedScheduled = false;
    await this.#handBack(this.#lapsed.splice(0));
  }

  #start(message: LeasedMessage, receiver: string, endpoints: Map<string, Promise<WebhookEndpoint>>): void {
    const { merchantId } = message;
    let endpoint = endpoints.get(merchantId);
    if (endpoint === undefined) {
      endpoint = this.#endpoints.resolve(merchantId);
      // A changed webhook URL moves the merchant's later messages to its new receiver's share.
      endpoint.then(({ url }) => this.#shares.learn(merchantId, url)).catch(() => undefined);
      endpoints.set(merchantId, endpoint);
    }
    this.#shares.started(receiver);
    const delivery = this.#deliver(message, receiver, endpoint);
    this.#deliveries.add(delivery);
    void delivery.finally(() => {
      this.#deliveries.delete(delivery);
      this.#shares.ended(receiver);
      this.#pump();
      // Claims are write transactions: under a backlog, claim a batch of `concurrency` at a time, not one
      // message per finished delivery.
      if (this.#backlog && this.#room() >= Math.min(this.#shares.concurrency, BATCH)) this.#pollSoon();
    });
  }

  async #deliver(
    message: LeasedMessage,
    receiver: string,
    endpoint: Promise<WebhookEndpoint>,
  ): Promise<void> {
    const attemptedAt = this.#now();
    const sendBy =
      this.#sendBeforeLeaseEndMs === undefined ? undefined : message.leaseUntil - this.#sendBeforeLeaseEndMs;
    const { statusCode, latencyMs, error, timedOut, leaseRanOut } = await this.#sender.attempt(
      message,
      endpoint,
      attemptedAt,
      sendBy,
    );
    if (leaseRanOut) {
      // Nothing was sent and nothing is recorded: it goes back for any process to take again. Sent
      // anyway, it could still be under way when another process took it, and go out twice.
      this.#lapse(message);
      this.#log.debug({ messageId: message.id }, 'webhook attempt not sent: its lease ran out first');
      return;
    }
    this.#shares.answered(receiver, timedOut);
    if (error !== null) {
      this.#log.debug({ messageId: message.id, statusCode, error }, 'webhook attempt failed');
    }
    const at = this.#now();
    const attemptCount = message.attemptCount + 1;
    const delay = error === null ? undefined : nextDelayMs(this.#delays[message.schedule], attemptCount);
    // A leased message is PENDING: claims and reads of committed messages take nothing else.
    const from = 'PENDING';
    const state = transition(
      from,
      error === null ? 'ANSWERED_2XX' : delay === undefined ? 'SCHEDULE_EXHAUSTED' : 'ATTEMPT_FAILED',
    );
    this.#metrics?.attempt(message.eventName, OUTCOMES[state], latencyMs / 1000);
    if (state === 'FAILED') {
      this.#log.warn(
        { messageId: message.id, merchantId: message.merchantId, attempts: attemptCount, error },
        'webhook message abandoned: retry schedule exhausted',
      );
    }
    this.#results.push({
      messageId: message.id,
      leaseUntil: message.leaseUntil,
      attempt: { id: newId('webhookAttempt'), attemptedAt, statusCode, latencyMs, error },
      from,
      state,
      attemptCount,
      nextAttemptAt: at + (delay ?? 0),
      lastError: error,
      at,
    });
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (this.#flushing !== undefined) return;
    this.#flushing = new Promise<void>((resolve) => {
      // Each flush is a commit (an fsync on SQLite): waiting FLUSH_DELAY_MS lets the results of many
      // deliveries share one.
      setTimeout(() => void this.#flushLoop().finally(resolve), FLUSH_DELAY_MS);
    }).finally(() => {
      this.#flushing = undefined;
      if (this.#results.length > 0) this.#scheduleFlush();
    });
  }

  async #flushLoop(): Promise<void> {
    while (this.#results.length > 0) {
      let batch: AttemptResult[] = [];
      try {
        await this.#inTurn(() => {
          // Taken in the turn: a claim that adopts a lease before it still finds these results.
          batch = this.#results.splice(0, BATCH);
          return this.#writeResults(batch);
        });
      } catch (error) {
        this.#failures.failed(error, 'could not record webhook attempts', { results: batch.length });
        if (!this.#running) {
          // Shutting down: the leases run out and the messages are sent again by another process.
          for (const result of batch) this.#letGo(result.messageId, result.leaseUntil);
          continue;
        }
        this.#results.unshift(...batch);
        await new Promise((resolve) => setTimeout(resolve, FLUSH_RETRY_MS));
      }
    }
  }

  /** Writes results and lets their messages go, in one turn: a claim after it finds them settled. */
  async #writeResults(batch: AttemptResult[]): Promise<void> {
    await this.#repo.recordResults(batch);
    for (const result of batch) {
      this.#letGo(result.messageId, result.leaseUntil);
      if (result.state === 'PENDING') this.#armRetryTimer(result.nextAttemptAt);
    }
  }

  /** Forgets a held message, unless a later claim of it (see `#adoptLease`) has taken its place. */
  #letGo(id: string, leaseUntil: number): void {
    if (this.#held.get(id)?.leaseUntil === leaseUntil) this.#held.delete(id);
  }

  /** Runs `work` once this process's previous claim or result write has ended. */
  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.#lastTurn.then(work);
    this.#lastTurn = turn.catch(() => undefined);
    return turn;
  }

  async #flush(): Promise<void> {
    while (this.#flushing !== undefined || this.#results.length > 0) {
      if (this.#flushing === undefined) this.#scheduleFlush();
      await this.#flushing;
    }
  }
}
