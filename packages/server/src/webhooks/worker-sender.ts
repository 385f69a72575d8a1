/**
 * Hands delivery attempts to the delivery worker thread (delivery-worker.ts), so that building the
 * payloads (vault reads, decryption), signing and HTTP run beside the main thread, which keeps the
 * acknowledgements, leases, the state machine, retry scheduling and every database write.
 *
 * Attempts and outcomes cross in batches, one message per turn of either event loop. Each attempt
 * carries what the worker cannot look up itself: the endpoint the main thread resolved (its secrets stay
 * in memory) and, for a first credentials attempt, the request and card the acknowledgement read (no card
 * number: that stays in the vault). If the worker dies, its attempts under way end as failed outcomes,
 * which the dispatcher retries on the schedule like any other, and another worker starts.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WalletEnv } from '../config.js';
import type { Logger } from '../log.js';
import type { RememberedRequest } from '../payments/payload.js';
import {
  type AttemptOutcome,
  type AttemptSender,
  describeFailure,
  type MessageForPayload,
  type WebhookEndpoint,
} from './sender.js';

/** What the worker builds its database handle, key ring and Sender from: the service's configuration. */
export interface DeliveryWorkerData {
  databaseUrl: string;
  vaultKeys: string | undefined;
  dataDir: string;
  env: WalletEnv;
  /** WEBHOOK_ALLOWED_NETWORKS, from which the worker builds its WebhookDestinations. */
  allowedNetworks: readonly string[];
  /** WEBHOOK_LOOPBACK. */
  loopback: boolean;
  timeoutMs: number;
  /** Its share of the process's connections per receiver origin. */
  connectionsPerOrigin: number;
}

export interface WorkerAttempt {
  seq: number;
  message: MessageForPayload;
  endpoint: WebhookEndpoint;
  attemptedAt: number;
  sendBy: number | undefined;
  remembered: RememberedRequest | undefined;
}

export type WorkerOutcome = AttemptOutcome & { seq: number };

export type ToWorker =
  | { type: 'attempts'; attempts: WorkerAttempt[] }
  | { type: 'provisioned'; id: number; error?: string }
  | { type: 'close' };

export type FromWorker =
  | { type: 'ready' }
  | { type: 'outcomes'; outcomes: WorkerOutcome[] }
  | { type: 'provision'; id: number; card: { vaultId: string; brand: string } }
  | { type: 'warning'; message: string };

export interface WorkerSenderOptions {
  log: Logger;
  worker: DeliveryWorkerData;
  /**
   * What the acknowledgement already read for a message's payload, taken (so given once, to its first
   * attempt); the worker would otherwise read it back.
   */
  remembered(message: MessageForPayload): RememberedRequest | undefined;
  /** Provisions a card's network token on its first use: a write, which the worker leaves to this thread. */
  networkTokens: { provision(card: { vaultId: string; brand: string }): Promise<unknown> };
}

/** 1 s: a worker that dies at once (say, its database is unreachable) is restarted at most this often. */
const RESTART_INTERVAL_MS = 1_000;
/**
 * 10 s: a worker loads in about a second; a start waits no longer for one that does not (its attempts
 * wait for it meanwhile, as during a restart).
 */
const READY_TIMEOUT_MS = 10_000;
/** 5 s: a worker closes its connections in milliseconds; one that takes longer is stopped. */
const CLOSE_TIMEOUT_MS = 5_000;

interface Unsent {
  attempt: WorkerAttempt;
  resolve(outcome: AttemptOutcome): void;
}

/**
 * The worker's program. The build runs the compiled sibling `delivery-worker.js`. From the sources (the
 * tests run them under Vitest) it is `delivery-worker.ts`, which Node cannot load by itself, and on
 * Node 20 tsx's loader does not reach a worker through `--import tsx` (its `execArgv`) or by importing
 * tsx there; so the worker first calls `register()` from tsx's documented API, `tsx/esm/api` (tsx is a
 * root devDependency), then imports the same program.
 */
function workerScript(): { entry: string | URL; eval: boolean } {
  const here = fileURLToPath(import.meta.url);
  const entry = pathToFileURL(path.join(path.dirname(here), `delivery-worker${path.extname(here)}`));
  if (path.extname(here) !== '.ts') return { entry, eval: false };
  const tsxApi = pathToFileURL(esmEntry('tsx', './esm/api'));
  return {
    entry: `import(${JSON.stringify(tsxApi.href)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`,
    eval: true,
  };
}

/** The file a package's export resolves to for `import`: `require.resolve` gives the `require` one. */
function esmEntry(name: string, subpath: string): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve(`${name}/package.json`);
  const { exports } = require(manifest) as { exports: Record<string, { import: { default: string } }> };
  const target = exports[subpath]?.import.default;
  if (target === undefined) throw new Error(`${name} exports no ${subpath} for import`);
  return path.join(path.dirname(manifest), target);
}

export class WorkerSender implements AttemptSender {
  readonly #log: Logger;
  readonly #data: DeliveryWorkerData;
  readonly #remembered: WorkerSenderOptions['remembered'];
  readonly #networkTokens: WorkerSenderOptions['networkTokens'];
  #worker: Worker | undefined;
  #startedAt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #running = false;
  /** Attempts waiting for the next message to the worker (or for a worker, while one restarts). */
  #unsent: Unsent[] = [];
  #postScheduled = false;
  /** Attempts the current worker has, by sequence number. */
  readonly #sent = new Map<number, (outcome: AttemptOutcome) => void>();
  #seq = 0;
  #exited: Promise<void> = Promise.resolve();
  #loaded = false;
  #markReady: () => void = () => undefined;
  /** Resolved when a worker first says it is ready, or when this sender closes. */
  readonly #ready = new Promise<void>((resolve) => {
    this.#markReady = resolve;
  });

  constructor(options: WorkerSenderOptions) {
    this.#log = options.log;
    this.#data = options.worker;
    this.#remembered = options.remembered;
    this.#networkTokens = options.networkTokens;
  }

  /** The running worker thread, if any: for operators' diagnostics and for tests that make it die. */
  get thread(): Worker | undefined {
    return this.#worker;
  }

  /** Whether a worker has loaded its program and opened the database since this sender started. */
  get ready(): boolean {
    return this.#loaded;
  }

  /**
   * Starts the worker and resolves once it has loaded its program and opened the database, or after
   * READY_TIMEOUT_MS with a warning.
   */
  async start(): Promise<void> {
    if (!this.#running) {
      this.#running = true;
      this.#spawn();
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), READY_TIMEOUT_MS);
    });
    const result = await Promise.race([this.#ready, late]);
    clearTimeout(timer);
    if (result === 'late') {
      this.#log.warn(
        { waitedMs: READY_TIMEOUT_MS },
        'the webhook delivery worker is not ready yet; webhooks wait for it',
      );
    }
  }

  attempt(
    message: MessageForPayload,
    endpoint: Promise<WebhookEndpoint>,
    attemptedAt: number,
    sendBy?: number,
  ): Promise<AttemptOutcome> {
    const { id, merchantId, eventName, subjectId } = message;
    const remembered = this.#remembered(message);
    return endpoint.then(
      (resolved) =>
        new Promise<AttemptOutcome>((resolve) => {
          const attempt: WorkerAttempt = {
            seq: ++this.#seq,
            // Only these fields: the dispatcher's message carries its lease and schedule too.
            message: { id, merchantId, eventName, subjectId },
            endpoint: resolved,
            attemptedAt,
            sendBy,
            remembered,
          };
          this.#unsent.push({ attempt, resolve });
          this.#schedulePost();
        }),
      (error: unknown) => ({
        statusCode: null,
        latencyMs: 0,
        error: describeFailure(error, this.#data.timeoutMs),
        timedOut: false,
      }),
    );
  }

  /** Stops the worker; the dispatcher calls it once every attempt has its outcome. */
  async close(): Promise<void> {
    this.#running = false;
    this.#markReady();
    clearTimeout(this.#restartTimer);
    const worker = this.#worker;
    if (worker === undefined) return;
    // Held until it has closed its database handle and connections, or stopped for taking too long.
    worker.ref();
    worker.postMessage({ type: 'close' } satisfies ToWorker);
    const hung = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
    await this.#exited;
    clearTimeout(hung);
  }

  #spawn(): void {
    // The monotonic clock: a wall clock set back an hour would otherwise hold the next restart an hour.
    this.#startedAt = performance.now();
    let worker: Worker;
    try {
      const script = workerScript();
      worker = new Worker(script.entry, { eval: script.eval, workerData: this.#data });
    } catch (error) {
      this.#log.error({ err: error }, 'could not start the webhook delivery worker; trying again');
      this.#failAll(
        this.#unsent.splice(0).map((unsent) => unsent.resolve),
        describeFailure(error, 0),
      );
      this.#restart();
      return;
    }
    this.#worker = worker;
    this.#exited = new Promise((resolve) =>
      worker.once('exit', (code) => resolve(this.#onExit(worker, code))),
    );
    worker.on('message', (message: FromWorker) => this.#onMessage(worker, message));
    worker.on('error', (error) =>
      this.#log.error({ err: error }, 'the webhook delivery worker failed; its attempts are retried'),
    );
    this.#updateRef();
    this.#schedulePost();
  }

  #onExit(worker: Worker, code: number): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    const lost = [...this.#sent.values()];
    this.#sent.clear();
    this.#failAll(lost, `The webhook delivery worker stopped (exit code ${code}) before the attempt ended.`);
    if (!this.#running) return;
    this.#log.warn(
      { exitCode: code, attempts: lost.length },
      'the webhook delivery worker stopped; restarting it',
    );
    this.#restart();
  }

  #failAll(attempts: ((outcome: AttemptOutcome) => void)[], error: string): void {
    for (const resolve of attempts) resolve({ statusCode: null, latencyMs: 0, error, timedOut: false });
  }

  /** Starts another worker, no sooner than RESTART_INTERVAL_MS after the last one started. */
  #restart(): void {
    const wait = Math.max(this.#startedAt + RESTART_INTERVAL_MS - performance.now(), 0);
    this.#restartTimer = setTimeout(() => {
      if (this.#running) this.#spawn();
    }, wait);
  }

  #onMessage(worker: Worker, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        this.#loaded = true;
        this.#markReady();
        break;
      case 'outcomes':
        for (const { seq, ...outcome } of message.outcomes) {
          const resolve = this.#sent.get(seq);
          this.#sent.delete(seq);
          resolve?.(outcome);
        }
        this.#updateRef();
        break;
      case 'provision':
        this.#networkTokens.provision(message.card).then(
          () => worker.postMessage({ type: 'provisioned', id: message.id } satisfies ToWorker),
          (error: unknown) =>
            worker.postMessage({
              type: 'provisioned',
              id: message.id,
              error: describeFailure(error, this.#data.timeoutMs),
            } satisfies ToWorker),
        );
        break;
      case 'warning':
        this.#log.warn({ error: message.message }, 'the webhook delivery worker lost a database connection');
        break;
    }
  }

  #schedulePost(): void {
    if (this.#postScheduled || this.#unsent.length === 0 || this.#worker === undefined) return;
    this.#postScheduled = true;
    // setImmediate: the attempts started in this turn of the event loop go in one message.
    setImmediate(() => {
      this.#postScheduled = false;
      const worker = this.#worker;
      if (worker === undefined) return;
      const unsent = this.#unsent;
      this.#unsent = [];
      try {
        worker.postMessage({ type: 'attempts', attempts: unsent.map((u) => u.attempt) } satisfies ToWorker);
      } catch (error) {
        // Nothing reached the worker: the attempts fail here and follow their schedule.
        this.#log.error({ err: error }, 'could not hand attempts to the webhook delivery worker');
        this.#failAll(
          unsent.map((u) => u.resolve),
          describeFailure(error, this.#data.timeoutMs),
        );
        return;
      }
      for (const { attempt, resolve } of unsent) this.#sent.set(attempt.seq, resolve);
      this.#updateRef();
    });
  }

  /** The worker keeps the process alive only while it has attempts to finish. */
  #updateRef(): void {
    if (this.#sent.size > 0 || this.#unsent.length > 0) this.#worker?.ref();
    else this.#worker?.unref();
  }
}
