/**
 * Typed domain errors. Domain code throws these with a stable `errorCode`; the table below is the only
 * place that maps a code to an HTTP status, and the API error handler writes `{ errorCode, errorMessage }`.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  INVALID_JSON: 400,
  UNSUPPORTED_CURRENCY: 400,
  UNAUTHORIZED: 401,
  OTP_INVALID: 401,
  OTP_EXPIRED: 401,
  SHOPPER_UNAUTHORIZED: 401,
  DEVICE_NOT_RECOGNIZED: 401,
  MERCHANT_NOT_APPROVED: 403,
  ORIGIN_NOT_ALLOWED: 403,
  OTP_LOCKED: 403,
  CODE_REQUIRED: 403,
  NOT_FOUND: 404,
  MERCHANT_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  PAYMENT_METHOD_NOT_FOUND: 404,
  SHOPPER_NOT_FOUND: 404,
  CREDENTIALS_REQUEST_NOT_FOUND: 404,
  WEBHOOK_MESSAGE_NOT_FOUND: 404,
  ORDER_NOT_FOUND: 404,
  ADDRESS_NOT_FOUND: 404,
  ENROLMENT_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_KEY_REUSED: 409,
  SHOPPER_ALREADY_EXISTS: 409,
  WALLET_FULL: 409,
  ADDRESS_IN_USE: 409,
  IDEMPOTENCY_REQUEST_IN_PROGRESS: 409,
  WEBHOOK_NOT_RESENDABLE: 409,
  ORDER_STATE_CONFLICT: 409,
  TOTAL_CHANGED: 409,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  HEADERS_TOO_LARGE: 431,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SESSION_EXPIRED: 422,
  PAYMENT_METHOD_EXPIRED: 422,
  AMOUNT_EXCEEDS_REQUESTED: 422,
  AMOUNT_EXCEEDS_SELECTION: 422,
  WEBHOOK_URL_NOT_CONFIGURED: 422,
  WEBHOOK_URL_NOT_ALLOWED: 422,
  RATE_LIMITED: 429,
  OTP_THROTTLED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  MESSAGE_NOT_SENT: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One line per code, for `docs/errors.md` and the OpenAPI document. */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  VALIDATION_ERROR:
    'A field is missing, has the wrong type or breaks a rule; the message names the field and the rule.',
  INVALID_JSON: 'The body is not valid JSON.',
  UNSUPPORTED_CURRENCY:
    "`currency` (an order's `currencyCode`) is not a supported currency: USD only, in capitals.",
  UNAUTHORIZED: 'The `Authorization: Bearer <apiKey>` header is missing, malformed, unknown or revoked.',
  OTP_INVALID: 'The one-time code is wrong; the message says how many tries are left before it is locked.',
  OTP_EXPIRED:
    'The one-time code has expired (codes live 10 minutes), was already used, or was never sent for this order and email; request a new one.',
  SHOPPER_UNAUTHORIZED:
    "The checkout page's `Authorization: Bearer <shopperToken>` header is missing, unknown or expired, or the token was issued for another order; sign in again with a one-time code.",
  DEVICE_NOT_RECOGNIZED:
    "The device token is unknown, expired (devices are remembered `REMEMBER_DEVICE_DAYS`, 30 unless set, and not at all when it is `off`) or forgotten (signed out on it, or the wallet deleted), or it was remembered at another merchant's checkout, or it remembers another shopper than the email given, or the merchant's checkout does not remember devices (`merchant update --remember-devices off`); sign in with a one-time code.",
  CODE_REQUIRED:
    'The shopper signed in with a remembered device; deleting the wallet, and adding an address or changing its values, need a sign-in with a one-time code (ask for one, verify it, and try again).',
  MERCHANT_NOT_APPROVED: 'The merchant account is not approved for the credentials flow.',
  ORIGIN_NOT_ALLOWED:
    "The request's `Origin` is missing or is not one of the merchant's allowed origins (or the merchant does not exist).",
  OTP_LOCKED: 'The one-time code was tried 5 times without success and no longer works; request a new one.',
  NOT_FOUND: 'No such route.',
  MERCHANT_NOT_FOUND: 'No merchant with that id.',
  API_KEY_NOT_FOUND: 'No API key with that id.',
  SESSION_NOT_FOUND: 'No payment-carousel session with that `sessionId` for this merchant.',
  PAYMENT_METHOD_NOT_FOUND: "No payment method with that `paymentId` in the session's wallet.",
  SHOPPER_NOT_FOUND: 'No shopper with that id or email.',
  CREDENTIALS_REQUEST_NOT_FOUND: 'No earlier credentials request of this merchant matches.',
  WEBHOOK_MESSAGE_NOT_FOUND: 'No webhook message with that id for this merchant.',
  ORDER_NOT_FOUND: 'No order with that id for this merchant.',
  ADDRESS_NOT_FOUND: "No address with that id in the shopper's wallet.",
  ENROLMENT_NOT_FOUND:
    'No enrolment waits for this email and order (it expired after 10 minutes, or was completed); enrol again.',
  METHOD_NOT_ALLOWED: 'The route exists but not for this HTTP method.',
  IDEMPOTENCY_KEY_REUSED: 'The `Idempotency-Key` was used before with a different request body or path.',
  SHOPPER_ALREADY_EXISTS: 'A shopper with this `email` already exists; sign in instead of enrolling.',
  WALLET_FULL:
    "The shopper's wallet already holds 20 cards, or 20 addresses, the most it can; use or remove one of them.",
  ADDRESS_IN_USE:
    'The address is the billing address of a card in the wallet; add that card again with another billing address, or remove it, first.',
  IDEMPOTENCY_REQUEST_IN_PROGRESS: 'A request with the same `Idempotency-Key` is still being processed.',
  WEBHOOK_NOT_RESENDABLE:
    'The webhook message is still pending, so it cannot be sent again yet; or it is a PAYMENT_CREDENTIALS whose card the shopper has removed, whose card data is never sent again.',
  ORDER_STATE_CONFLICT:
    'The order is no longer open for this step (already paid, failed, abandoned or expired, or a payment is under way).',
  TOTAL_CHANGED:
    'The checkout sent the total it showed, and the order now costs another amount (the merchant changed a shipping price or tax rate meanwhile); nothing was charged: quote again and pay.',
  REQUEST_TIMEOUT:
    'The request did not arrive whole in time (30 s by default, `REQUEST_TIMEOUT_MS`): the connection sent its headers or body too slowly, or stopped sending; the connection closes. Send the request again.',
  PAYLOAD_TOO_LARGE: 'The body is larger than the service accepts.',
  HEADERS_TOO_LARGE:
    "The request's headers are larger than the service accepts (Node's limit, 16 KiB by default); the connection closes.",
  UNSUPPORTED_MEDIA_TYPE:
    'The body is not sent as `application/json`, or in a charset other than UTF-8, or compressed (`Content-Encoding`).',
  SESSION_EXPIRED: 'The payment-carousel session has expired.',
  PAYMENT_METHOD_EXPIRED: 'The selected card has expired.',
  AMOUNT_EXCEEDS_REQUESTED: 'The reported amount is above the amount of the credentials request.',
  AMOUNT_EXCEEDS_SELECTION:
    'The amount is above the total the shopper agreed to in the hosted checkout that made the session.',
  WEBHOOK_URL_NOT_CONFIGURED: 'The merchant account has no webhook URL to deliver credentials to.',
  WEBHOOK_URL_NOT_ALLOWED:
    'The webhook URL is not allowed in this environment (https and public addresses only in production; public addresses in staging, and loopback ones on a staging service run on the developer’s own machine; plus the networks the operator allowed).',
  RATE_LIMITED:
    'Too many requests from this client address or for this merchant; retry after the number of seconds in the `Retry-After` header.',
  OTP_THROTTLED:
    'A code was sent to this email less than 30 seconds ago, or 10 asked for from this client address (IPv6: /64) or 30 in all in the last 24 hours; `Retry-After` and the message say how long to wait.',
  INTERNAL_ERROR: 'An unexpected error on our side; the request id identifies it in our logs.',
  SERVICE_UNAVAILABLE:
    'The service cannot reach its database for now (down, restarting, out of connections or disk, or locked), or the browser SDK it serves has not been built; retry after the seconds in `Retry-After`, with the same `Idempotency-Key`.',
  MESSAGE_NOT_SENT:
    'The message to the shopper (a one-time code) could not be sent; retry after the seconds in `Retry-After`.',
};

export class DomainError extends Error {
  /** Seconds until asking again may succeed; the API sends it as `Retry-After`. */
  readonly retryAfterSeconds?: number;

  /** `options.cause`: what failed underneath (a mail server's refusal), for the log only. */
  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DomainError';
  }

  get status(): number {
    return ERROR_STATUS[this.errorCode];
  }
}

export class ValidationError extends DomainError {
  constructor(message: string) {
    super('VALIDATION_ERROR', message);
  }
}

export class NotFoundError extends DomainError {}

export class UnauthorizedError extends DomainError {
  constructor(message = 'A valid API key is required in the Authorization header as "Bearer <apiKey>".') {
    super('UNAUTHORIZED', message);
  }
}
