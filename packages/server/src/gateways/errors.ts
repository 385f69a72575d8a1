/**
 * Gateway errors are their own layer: connectors throw GatewayError, and checkout turns a gateway's
 * outcome or error into the interface's SDK codes (section 7.2) with `sdkResult`, so no gateway text
 * ever reaches a merchant's `error` callback.
 */
import { scrub } from '../log.js';
import type { GatewayOutcome } from './gateway.js';

/**
 * timeout: no answer within the merchant's time-out (the authorization may still have happened; the
 * same idempotency key finds out). undecided: a gateway that replays idempotent requests was asked
 * again after a time-out and still gave no answer: it may have authorized, so the payment is neither
 * failed nor paid until the same key is answered. network: no connection. rejected_request: the gateway refused the
 * request itself (4xx/5xx). unexpected_response: an answer that could not be read. unsupported: the
 * connector cannot do what was asked. configuration: the merchant's gateway settings or credentials
 * are unusable.
 */
export type GatewayErrorKind =
  | 'timeout'
  | 'undecided'
  | 'network'
  | 'rejected_request'
  | 'unexpected_response'
  | 'unsupported'
  | 'configuration';

export class GatewayError extends Error {
  /** The gateway's HTTP status, when it answered one. */
  readonly statusCode: number | undefined;
  /** The gateway's own error code, when it answered one (made fit for logs by `gatewayText`). */
  readonly gatewayCode: string | undefined;

  constructor(
    readonly kind: GatewayErrorKind,
    message: string,
    options?: { cause?: unknown; statusCode?: number; gatewayCode?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.statusCode = options?.statusCode;
    this.gatewayCode = options?.gatewayCode;
  }
}

// 4 KiB of a gateway's text is scrubbed, 200 characters kept: enough for an error sentence, too few
// for an echoed request, and scrubbing stays cheap whatever size of answer a gateway sends.
const SCRUBBED_GATEWAY_TEXT = 4096;
const MAX_GATEWAY_TEXT = 200;

/**
 * A gateway's own words (an error message or code, a response message), made fit for our logs and
 * errors: a gateway may echo the request it could not read, card number, CVV and cryptogram included.
 * Card data and secrets are scrubbed, whitespace runs become one space, and the text is cut to 200
 * characters, marked with `…`. Values that are not text are shown as JSON.
 */
export function gatewayText(value: unknown): string {
  const text = typeof value === 'string' ? value : String(JSON.stringify(value));
  const scrubbed = scrub(text.slice(0, SCRUBBED_GATEWAY_TEXT)).replace(/\s+/g, ' ');
  return scrubbed.length > MAX_GATEWAY_TEXT || text.length > SCRUBBED_GATEWAY_TEXT
    ? `${scrubbed.slice(0, MAX_GATEWAY_TEXT)}…`
    : scrubbed;
}

/** What the SDK reports for a payment: `success(...)`, or `error(orderId, errorCode, errorMessage)`. */
export type SdkResult =
  | { kind: 'success' }
  | { kind: 'error'; errorCode: '990'; errorMessage: 'Card was declined' }
  | { kind: 'error'; errorCode: '995'; errorMessage: 'Unable to process card' }
  | { kind: 'error'; errorCode: '-1'; errorMessage: null };

/**
 * The interface's codes (section 7.2), exactly: 990 "Card was declined" when the processor could not
 * use the card (usually bad credentials), 995 "Unable to process card" when it processed the card and
 * the issuer declined, -1 with a null message for anything else: a gateway error, a time-out, no
 * connection, an unreadable answer.
 */
export function sdkResult(answer: GatewayOutcome | GatewayError): SdkResult {
  const outcome = answer instanceof GatewayError ? 'error' : answer;
  switch (outcome) {
    case 'approved':
      return { kind: 'success' };
    case 'invalid_card':
      return { kind: 'error', errorCode: '990', errorMessage: 'Card was declined' };
    case 'declined':
      return { kind: 'error', errorCode: '995', errorMessage: 'Unable to process card' };
    case 'error':
      return { kind: 'error', errorCode: '-1', errorMessage: null };
    default: {
      const unknown: never = outcome;
      throw new Error(`no SDK result for gateway outcome ${String(unknown)}`);
    }
  }
}
