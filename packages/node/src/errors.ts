/** A refusal from the service: its HTTP status and `{ errorCode, errorMessage }` (docs/errors.md lists them). */
export class WalletCheckoutError extends Error {
  override readonly name = 'WalletCheckoutError';

  constructor(
    readonly status: number,
    readonly errorCode: string,
    readonly errorMessage: string,
    /** The `Request-Id` the service answered with: quote it when you ask the operator about a failure. */
    readonly requestId: string | null,
  ) {
    super(`${errorCode} (HTTP ${status}): ${errorMessage}`);
  }
}

/**
 * No answer from the service: the connection failed or the time-out passed, on the last of the attempts
 * the client was allowed. A POST may have been carried out; calling it again with the same
 * `idempotencyKey` is safe and returns its answer.
 */
export class WalletCheckoutConnectionError extends Error {
  override readonly name = 'WalletCheckoutConnectionError';

  constructor(
    message: string,
    /** The `Idempotency-Key` the POST was sent with; null for a GET. */
    readonly idempotencyKey: string | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A webhook whose signature, timestamp or body does not check out: answer it 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}
