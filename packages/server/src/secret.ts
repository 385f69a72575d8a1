import { inspect } from 'node:util';

const MASK = '[redacted]';

/**
 * Wraps a value that must never reach a log, an error message or a JSON body by accident.
 * Only `reveal()` gives the value back; every other way of printing it shows `[redacted]`.
 */
export class Secret<T = string> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toString(): string {
    return MASK;
  }

  toJSON(): string {
    return MASK;
  }

  [inspect.custom](): string {
    return `Secret(${MASK})`;
  }
}
