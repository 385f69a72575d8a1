/**
 * How a dispatcher shares its delivery slots out among receivers, so that one receiver that stops
 * answering cannot hold up the others (see "One receiver's share" in this folder's README).
 *
 * A receiver is the origin of a webhook URL, whichever merchants use it. Each may have `perReceiver`
 * attempts in flight, `perSlowReceiver` once an attempt to it timed out, and past `perSlowReceiver` only
 * while the last share's worth of slots stays free. A message that may not start yet is set aside for its
 * receiver and started, before anything else, when one of that receiver's attempts ends.
 */
import { Fifo } from './fifo.js';
import type { LeasedMessage } from './repo.js';

export interface SharesOptions {
  /** Attempts in flight at once in the process. */
  concurrency: number;
  /** Attempts in flight at once to one receiver. */
  perReceiver: number;
  /** The same for a receiver whose last attempt timed out; and what any receiver may take of the slots kept free. */
  perSlowReceiver: number;
}

/** A receiver's set-aside messages, and how many of them each merchant has (for `saturated`). */
interface SetAside {
  messages: Fifo<LeasedMessage>;
  merchants: Map<string, number>;
}

/** Merchants whose receiver a process remembers; beyond this it forgets them all and looks them up again. */
const MAX_RECEIVERS_KNOWN = 10_000;

/**
 * Whose share a merchant's deliveries count against: the origin of its webhook URL, so that merchants
 * on one endpoint (a platform's connected accounts, say) share it as they share its connections, or the
 * merchant alone when it has no URL that could be dialled.
 */
function receiverKey(merchantId: string, url: string | null): string {
  const origin = url !== null && URL.canParse(url) ? new URL(url).origin : 'null';
  return origin === 'null' ? merchantId : origin;
}

export class ReceiverShares {
  readonly concurrency: number;
  readonly perReceiver: number;
  readonly perSlowReceiver: number;
  /** Slots in use past which a receiver starts no more than `perSlowReceiver` (see `mayStart`). */
  readonly #sharedSlots: number;
  /** Attempts in flight, all receivers together. */
  #inUse = 0;
  /** Each merchant's receiver and the URL it was worked out from, as last learnt. */
  readonly #receivers = new Map<string, { url: string | null; receiver: string }>();
  /** Attempts in flight by receiver. */
  readonly #inFlight = new Map<string, number>();
  /** Messages set aside by receiver, in the order they came. */
  readonly #waiting = new Map<string, SetAside>();
  /** Receivers with messages set aside that may start one, served before anything else. */
  readonly #ready = new Set<string>();
  /** Receivers whose last attempt timed out. */
  readonly #slow = new Set<string>();
  /** Receivers whose merchants the last claim left out (see `saturated`). */
  #skipped = new Set<string>();

  constructor(options: SharesOptions) {
    this.concurrency = options.concurrency;
    this.perReceiver = Math.min(options.perReceiver, this.concurrency);
    this.perSlowReceiver = Math.min(options.perSlowReceiver, this.perReceiver);
    // A share's worth kept free (none when one receiver may have every slot): 384 of the default 512.
    this.#sharedSlots = this.concurrency - Math.min(this.perReceiver, this.concurrency - this.perReceiver);
  }

  /** The merchant's receiver as last learnt; undefined until its endpoint has been looked up. */
  receiverOf(merchantId: string): string | undefined {
    return this.#receivers.get(merchantId)?.receiver;
  }

  /** Records the merchant's webhook URL as just looked up, and returns its receiver. */
  learn(merchantId: string, url: string | null): string {
    const known = this.#receivers.get(merchantId);
    // Worked out again only when the URL changed: this runs once per merchant for each round of starts.
    if (known !== undefined && known.url === url) return known.receiver;
    if (known === undefined && this.#receivers.size >= MAX_RECEIVERS_KNOWN) this.#receivers.clear();
    const receiver = receiverKey(merchantId, url);
    this.#receivers.set(merchantId, { url, receiver });
    return receiver;
  }

  hasSlot(): boolean {
    return this.#inUse < this.concurrency;
  }

  /**
   * Whether the receiver may start another attempt: under its share, and with `perSlowReceiver` or more
   * in flight, only while fewer than `#sharedSlots` are in use. The last share's worth of slots is kept
   * for receivers below `perSlowReceiver`, so that receivers hanging at once cannot fill the process
   * until their first time-outs: three take a share each, and every other one 8 at most (the defaults).
   */
  mayStart(receiver: string): boolean {
    const inFlight = this.#inFlight.get(receiver) ?? 0;
    if (inFlight < this.perSlowReceiver) return true;
    const share = this.#slow.has(receiver) ? this.perSlowReceiver : this.perReceiver;
    return inFlight < share && this.#inUse < this.#sharedSlots;
  }

  /** Whether a new message for the receiver must queue behind others set aside for it. */
  hasSetAside(receiver: string): boolean {
    return this.#waiting.has(receiver);
  }

  started(receiver: string): void {
    this.#inFlight.set(receiver, (this.#inFlight.get(receiver) ?? 0) + 1);
    this.#inUse++;
  }

  /** A receiver whose attempt timed out gets `perSlowReceiver` until an attempt ends any other way. */
  answered(receiver: string, timedOut: boolean): void {
    if (timedOut) this.#slow.add(receiver);
    else this.#slow.delete(receiver);
  }

  /** An attempt ended: its slot is free, and the receiver's set-aside messages may use it. */
  ended(receiver: string): void {
    const left = (this.#inFlight.get(receiver) ?? 1) - 1;
    if (left === 0) this.#inFlight.delete(receiver);
    else this.#inFlight.set(receiver, left);
    this.#inUse--;
    if (this.#waiting.has(receiver)) this.#ready.add(receiver);
  }

  /** Sets a message aside for its receiver; `ready` when the receiver may have room already. */
  setAside(receiver: string, message: LeasedMessage, ready = false): void {
    let waiting = this.#waiting.get(receiver);
    if (waiting === undefined) {
      waiting = { messages: new Fifo(), merchants: new Map() };
      this.#waiting.set(receiver, waiting);
    }
    waiting.messages.push(message);
    waiting.merchants.set(message.merchantId, (waiting.merchants.get(message.merchantId) ?? 0) + 1);
    if (ready) this.#ready.add(receiver);
  }

  /**
   * Hands `start` the set-aside messages that may start now, receiver by receiver, oldest first, until no
   * slot is left. Returns whether a receiver the last claim left out now has less than a share set aside:
   * then claim again, so that its backlog drains without waiting for the poll.
   */
  startReady(start: (message: LeasedMessage, receiver: string) => void): boolean {
    let claimAgain = false;
    for (const receiver of this.#ready) {
      const { messages, merchants } = this.#waiting.get(receiver) as SetAside;
      while (this.hasSlot() && this.mayStart(receiver) && messages.length > 0) {
        const message = messages.shift() as LeasedMessage;
        const left = (merchants.get(message.merchantId) ?? 1) - 1;
        if (left === 0) merchants.delete(message.merchantId);
        else merchants.set(message.merchantId, left);
        start(message, receiver);
      }
      if (messages.length < this.perReceiver && this.#skipped.delete(receiver)) claimAgain = true;
      if (messages.length === 0) this.#waiting.delete(receiver);
      if (messages.length === 0 || !this.mayStart(receiver)) this.#ready.delete(receiver);
      if (!this.hasSlot()) break;
    }
    return claimAgain;
  }

  /**
   * The merchants a claim should leave out: those whose messages wait for a receiver with a share's worth
   * set aside already, since claiming more for them would only take room from the others. Remembers
   * those receivers for `startReady`. Walks the receivers and their merchants, not their messages: a
   * receiver that stopped answering may have tens of thousands set aside, and every claim asks.
   */
  saturated(): string[] {
    const merchants = new Set<string>();
    this.#skipped = new Set();
    for (const [receiver, waiting] of this.#waiting) {
      if (waiting.messages.length < this.perReceiver) continue;
      this.#skipped.add(receiver);
      for (const merchantId of waiting.merchants.keys()) merchants.add(merchantId);
    }
    return [...merchants];
  }

  /** Empties every receiver's set-aside messages, for a dispatcher that stops. */
  takeSetAside(): LeasedMessage[] {
    const messages = [...this.#waiting.values()].flatMap((waiting) => [...waiting.messages]);
    this.#waiting.clear();
    this.#ready.clear();
    return messages;
  }
}
