import { DomainError } from '../errors.js';

/** A wrong code; `triesLeft` more are allowed before the code is locked. */
export class OtpInvalidError extends DomainError {
  constructor(readonly triesLeft: number) {
    super(
      'OTP_INVALID',
      `The code is not correct; ${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left before a new code is needed.`,
    );
    this.name = 'OtpInvalidError';
  }
}

/**
 * A code was sent to the email too recently, or too many in a day; a route may put `retryAfterSeconds`
 * in `Retry-After`.
 */
export class OtpThrottledError extends DomainError {
  constructor(
    override readonly retryAfterSeconds: number,
    message = `A code was sent to this email a moment ago; wait ${retryAfterSeconds} ${retryAfterSeconds === 1 ? 'second' : 'seconds'} before asking for another.`,
  ) {
    super('OTP_THROTTLED', message);
    this.name = 'OtpThrottledError';
  }
}
