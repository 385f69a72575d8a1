/** Logging a failure that repeats, as an outage of the database does, without a line per occurrence. */
import { causeChain } from './db/unavailable.js';

/** While a failure goes on, one log line for each kind of it this often rather than one per occurrence. */
export const FAILURE_LOG_INTERVAL_MS = 10_000;

/** A failure's kind: the code (else the message) of the error and of each cause, `ETIMEDOUT < …`. */
function kindOf(error: unknown): string {
  return Array.from(causeChain(error), (link) => String(link.code ?? link.message)).join(' < ');
}

export interface ErrorLogger {
  error(details: object, message: string): void;
}

interface Repeats {
  message: string;
  failure: string;
  repeated: number;
  timer: NodeJS.Timeout;
}

/**
 * Logs the first failure of each kind under each message in full, then, at the end of
 * FAILURE_LOG_INTERVAL_MS, `<message>: more of the same` with how many more came (`repeated`), so that
 * every one is accounted for; the next one after that is logged in full again. An outage otherwise logs a
 * full error line per request, thousands a second under load, and one per poll from each background loop.
 */
export class FailureLog {
  readonly #log: ErrorLogger;
  readonly #open = new Map<string, Repeats>();

  constructor(log: ErrorLogger) {
    this.#log = log;
  }

  /** `log` is where a full line goes (a request's logger, with its id); summaries go to the constructor's. */
  failed(error: unknown, message: string, details: object = {}, log: ErrorLogger = this.#log): void {
    const failure = kindOf(error);
    const key = `${message}\n${failure}`;
    const open = this.#open.get(key);
    if (open) {
      open.repeated += 1;
      return;
    }
    log.error({ ...details, err: error }, message);
    const timer = setTimeout(() => this.#summarize(key), FAILURE_LOG_INTERVAL_MS);
    timer.unref();
    this.#open.set(key, { message, failure, repeated: 0, timer });
  }

  /** Logs the counts not yet logged now, as the service stops. */
  flush(): void {
    for (const key of [...this.#open.keys()]) this.#summarize(key);
  }

  #summarize(key: string): void {
    const open = this.#open.get(key);
    if (!open) return;
    clearTimeout(open.timer);
    this.#open.delete(key);
    if (open.repeated === 0) return;
    this.#log.error({ failure: open.failure, repeated: open.repeated }, `${open.message}: more of the same`);
  }
}
