/**
 * How the sandbox decides: by the card's (or token's) last four digits, after the checks a real gateway
 * makes before it asks the network. Wallet Checkout's test cards (DESIGN.md §3) live in this table.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { brandOf, isAccountNumber, isExpired, isWellFormedCryptogram } from './cards.js';
import type { Authorization, AuthorizationRequest, AuthorizationStatus } from './model.js';
import type { CryptogramLedger } from './records.js';

interface Decision {
  status: AuthorizationStatus;
  responseCode: string;
  responseMessage: string;
  /** Whether the card network saw the request, and so returned a transaction id and AVS/CVV results. */
  reachedNetwork: boolean;
}

const APPROVED: Decision = {
  status: 'AUTHORIZED',
  responseCode: '00',
  responseMessage: 'Approved',
  reachedNetwork: true,
};

/** Outcomes by last four digits; any other valid, unexpired number is approved. */
const TEST_CARD_DECISIONS: Readonly<Record<string, Decision>> = {
  '1111': APPROVED,
  '4444': APPROVED,
  '0002': { status: 'DECLINED', responseCode: '05', responseMessage: 'Do not honor', reachedNetwork: true },
  '0069': {
    status: 'REJECTED',
    responseCode: '14',
    responseMessage: 'Invalid account number',
    reachedNetwork: true,
  },
  '0119': {
    status: 'FAILED',
    responseCode: '96',
    responseMessage: 'System malfunction',
    reachedNetwork: false,
  },
};

const INVALID_NUMBER: Decision = {
  status: 'REJECTED',
  responseCode: '14',
  responseMessage: 'Invalid card number',
  reachedNetwork: false,
};

const EXPIRED: Decision = {
  status: 'REJECTED',
  responseCode: '54',
  responseMessage: 'Expired card',
  reachedNetwork: false,
};

/** `63` (security violation): what networks answer for a cryptogram that fails validation. */
const MALFORMED_CRYPTOGRAM: Decision = {
  status: 'REJECTED',
  responseCode: '63',
  responseMessage: 'Invalid cryptogram',
  reachedNetwork: false,
};

const SPENT_CRYPTOGRAM: Decision = {
  status: 'REJECTED',
  responseCode: '63',
  responseMessage: 'Cryptogram already used',
  reachedNetwork: false,
};

export interface AuthorizeContext {
  now: Date;
  cryptograms: CryptogramLedger;
}

function decide(request: AuthorizationRequest, context: AuthorizeContext): Decision {
  const { source } = request;
  const number = source.type === 'card' ? source.number : source.token;
  if (!isAccountNumber(number)) return INVALID_NUMBER;
  if (isExpired(source.expMonth, source.expYear, context.now)) return EXPIRED;
  if (source.type === 'network_token') {
    // Only the token service that issued it could check a cryptogram's value; the sandbox holds no
    // keys, so it checks the form and that the cryptogram has not been spent before.
    if (!isWellFormedCryptogram(source.cryptogram)) return MALFORMED_CRYPTOGRAM;
    if (!context.cryptograms.spend(source.token, source.cryptogram, context.now.getTime())) {
      return SPENT_CRYPTOGRAM;
    }
  }
  return TEST_CARD_DECISIONS[number.slice(-4)] ?? APPROVED;
}

/** `digits` random decimal digits, the first never 0. */
function randomDigits(digits: number): string {
  let out = String(randomInt(1, 10));
  while (out.length < digits) out += String(randomInt(10));
  return out;
}

const AUTH_CODE_ALPHABET = '0123456789ABCDEFGHJKLMNPQRSTUVWXYZ';

function randomAuthCode(): string {
  let out = '';
  while (out.length < 6) out += AUTH_CODE_ALPHABET[randomInt(AUTH_CODE_ALPHABET.length)];
  return out;
}

/** Decides a new authorization. Spends a network token's cryptogram when it gets that far. */
export function authorize(request: AuthorizationRequest, context: AuthorizeContext): Authorization {
  const decision = decide(request, context);
  const { source } = request;
  const number = source.type === 'card' ? source.number : source.token;
  const approved = decision.status === 'AUTHORIZED';
  return {
    id: `gtx_${randomBytes(12).toString('hex')}`,
    status: decision.status,
    responseCode: decision.responseCode,
    responseMessage: decision.responseMessage,
    authCode: approved ? randomAuthCode() : null,
    // Y: street and postal code match. M: CVV matches; P: none was sent to check.
    avsResult: decision.reachedNetwork ? 'Y' : null,
    cvvResult: decision.reachedNetwork && source.type === 'card' ? (source.cvv ? 'M' : 'P') : null,
    amount: request.amount,
    currency: request.currency,
    reference: request.reference,
    paymentMethod: {
      type: source.type,
      brand: brandOf(number),
      last4: number.slice(-4),
      expMonth: source.expMonth,
      expYear: source.expYear,
    },
    // 15 digits: the length of a Visa transaction identifier.
    networkTransactionId: decision.reachedNetwork ? randomDigits(15) : null,
    storedCredential: request.storedCredential,
    // 10 digits, so that log scrubbers looking for card numbers (12 to 19 digits) leave it alone.
    stpReferenceNum: request.connected ? randomDigits(10) : null,
    createdAt: context.now.toISOString(),
  };
}
