import type { AttemptOutcome, AttemptSender, MessageForPayload, WebhookEndpoint } from './sender.js';

interface Share {
  sender: AttemptSender;
  /** Attempts given to it and not yet ended. */
  busy: number;
}

/**
 * Spreads the dispatcher's attempts over several senders: the delivery worker threads. Each attempt goes
 * to the sender with the fewest under way, so one that is slower, or restarting after its thread died,
 * is given less until it catches up.
 */
export class SpreadSender implements AttemptSender {
  readonly #shares: Share[];

  constructor(senders: readonly AttemptSender[]) {
    if (senders.length === 0) throw new TypeError('A SpreadSender needs at least one sender.');
    this.#shares = senders.map((sender) => ({ sender, busy: 0 }));
  }

  start(): void {
    for (const { sender } of this.#shares) sender.start();
  }

  attempt(
    message: MessageForPayload,
    endpoint: Promise<WebhookEndpoint>,
    attemptedAt: number,
  ): Promise<AttemptOutcome> {
    let least = this.#shares[0] as Share;
    for (const share of this.#shares) if (share.busy < least.busy) least = share;
    least.busy++;
    const chosen = least;
    return chosen.sender.attempt(message, endpoint, attemptedAt).then((outcome) => {
      chosen.busy--;
      return outcome;
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#shares.map(({ sender }) => sender.close()));
  }
}
