import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import type { AttemptOutcome, AttemptSender, MessageForPayload, WebhookEndpoint } from './sender.js';

interface Share {
  sender: AttemptSender;
  /** Attempts given to it and not yet ended. */
  busy: number;
}

export interface SpreadSenderOptions {
  /**
   * True while the main thread has no time to spare; then only the first sender takes attempts. By
   * default, the main thread's event-loop utilization over the last MEASURE_INTERVAL_MS is above
   * BUSY_UTILIZATION.
   */
  mainThreadBusy?: () => boolean;
}

/** How often the main thread's event-loop utilization is measured. */
const MEASURE_INTERVAL_MS = 250;
/**
 * Above this the main thread counts as busy. Measured on two cores: 0.8–0.95 while 50 connections send
 * acknowledgements as fast as they come back, 0.35–0.5 while a backlog drains with nothing to acknowledge.
 */
const BUSY_UTILIZATION = 0.7;

/** This thread's event-loop utilization (0 to 1) from one call of `sample` to the next. */
export class LoopLoad {
  #last: EventLoopUtilization = performance.eventLoopUtilization();

  sample(): number {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, this.#last);
    this.#last = now;
    return utilization;
  }
}

/**
 * Spreads the dispatcher's attempts over several senders: the delivery worker threads. Each attempt goes
 * to the sender with the fewest under way, so one that is slower, or restarting after its thread died,
 * is given less until it catches up.
 *
 * The acknowledgements come first: while the main thread is busy answering the API, only the first
 * sender takes attempts. More delivery threads would take cores from the main thread and slow its
 * answers; when it has time to spare (a backlog draining, steady traffic) all of them deliver.
 */
export class SpreadSender implements AttemptSender {
  readonly #shares: Share[];
  readonly #mainThreadBusy: () => boolean;
  #measureTimer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(senders: readonly AttemptSender[], options: SpreadSenderOptions = {}) {
    if (senders.length === 0) throw new TypeError('A SpreadSender needs at least one sender.');
    this.#shares = senders.map((sender) => ({ sender, busy: 0 }));
    this.#mainThreadBusy = options.mainThreadBusy ?? (() => this.#busy);
  }

  async start(): Promise<void> {
    if (this.#shares.length > 1) this.#measure();
    await Promise.all(this.#shares.map(({ sender }) => sender.start()));
  }

  attempt(
    message: MessageForPayload,
    endpoint: Promise<WebhookEndpoint>,
    attemptedAt: number,
    sendBy?: number,
  ): Promise<AttemptOutcome> {
    let least = this.#shares[0] as Share;
    if (!this.#mainThreadBusy()) {
      for (const share of this.#shares) if (share.busy < least.busy) least = share;
    }
    least.busy++;
    const chosen = least;
    return chosen.sender.attempt(message, endpoint, attemptedAt, sendBy).then((outcome) => {
      chosen.busy--;
      return outcome;
    });
  }

  async close(): Promise<void> {
    clearInterval(this.#measureTimer);
    await Promise.all(this.#shares.map(({ sender }) => sender.close()));
  }

  #measure(): void {
    const load = new LoopLoad();
    this.#measureTimer = setInterval(() => {
      this.#busy = load.sample() > BUSY_UTILIZATION;
    }, MEASURE_INTERVAL_MS);
    this.#measureTimer.unref();
  }
}
