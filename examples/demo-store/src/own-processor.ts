/**
 * The processor-agnostic flow, for a merchant account approved for it (authorization mode `merchant`):
 * ask Wallet Checkout for the card's credentials, receive them by signed webhook, authorize with the
 * shop's own processor, report the processor's raw answer. Here the "own processor" is the sandbox
 * gateway; swap `authorize` for your processor's API.
 *
 * Card data (network token, cryptogram, PAN) lives only in memory, for this one authorization: it is
 * never logged, stored or sent to the browser.
 */

import type { PaymentCredentialsEvent, WalletCheckout } from '@wallet-checkout/node';
import type { CredentialsInbox } from './webhooks.js';

export interface OwnProcessorOptions {
  wallet: WalletCheckout;
  inbox: CredentialsInbox;
  /** Base URL of the processor; the sandbox gateway's JSON API here. */
  processorUrl: string;
}

export interface Payment {
  /** The shop's order number: the `merchantReference`, and the idempotency key of each step. */
  reference: string;
  sessionId: string;
  paymentId: string;
  /** Integer cents, computed by the shop's server. */
  amount: number;
}

export type PaymentOutcome =
  | { approved: true; transactionId: string }
  | { approved: false; code: string; message: string };

/** 30 s: credentials usually arrive within milliseconds; past this the shopper is told to try again. */
const CREDENTIALS_WAIT_MS = 30_000;
/** 15 s for the processor's answer. */
const PROCESSOR_TIMEOUT_MS = 15_000;
/** What the shop reports as `pspHostName`: the name of its processor. */
const PROCESSOR_NAME = 'sandbox-gateway';
/** The sandbox accepts any key; your processor gives you one (keep it in your secrets, not in code). */
const PROCESSOR_API_KEY = 'demo-store';

export async function payWithOwnProcessor(
  options: OwnProcessorOptions,
  payment: Payment,
): Promise<PaymentOutcome> {
  const { wallet, inbox } = options;
  // 1–3. Wait first, then ask: the webhook can arrive before the acknowledgement does.
  const waiting = inbox.expect(payment.reference, CREDENTIALS_WAIT_MS);
  try {
    await wallet.payments.requestCredentials(
      {
        paymentId: payment.paymentId,
        sessionId: payment.sessionId,
        amount: payment.amount,
        merchantReference: payment.reference,
        currency: 'USD',
      },
      { idempotencyKey: payment.reference },
    );
  } catch (error) {
    waiting.cancel();
    throw error;
  }
  const event = await waiting.received;

  // 4. Authorize with the processor.
  const answer = await authorize(options.processorUrl, event, payment);

  // 5. Report the raw answer, approved or declined, so Wallet Checkout can complete its records.
  await wallet.payments.reportExternalResponse(
    {
      paymentId: payment.paymentId,
      pspRawResponse: answer.raw,
      amount: payment.amount,
      pspHostName: PROCESSOR_NAME,
      currency: 'USD',
      isRecurring: false,
    },
    { idempotencyKey: `${payment.reference}-external-response` },
  );
  return answer.outcome;
}

/** A network token with its cryptogram is preferred (safer, better approval rates); the PAN otherwise. */
function paymentSource(credentials: PaymentCredentialsEvent['credentials']): Record<string, unknown> {
  const token = credentials.find((entry) => entry.type === 'NETWORK_TOKEN');
  if (token) {
    return {
      type: 'network_token',
      token: token.token,
      // The webhook's `cvv` of a network token is its single-use cryptogram, not a security code.
      cryptogram: token.cvv,
      expMonth: Number(token.expirationMonth),
      expYear: Number(token.expirationYear),
    };
  }
  const pan = credentials.find((entry) => entry.type === 'PAN');
  if (!pan) throw new Error('the PAYMENT_CREDENTIALS webhook carried neither a network token nor a PAN');
  return {
    type: 'card',
    number: pan.pan,
    expMonth: Number(pan.expirationMonth),
    expYear: Number(pan.expirationYear),
  };
}

/** The sandbox gateway's JSON authorization: `POST /v1/authorizations`. */
async function authorize(
  processorUrl: string,
  event: PaymentCredentialsEvent,
  payment: Payment,
): Promise<{ raw: string; outcome: PaymentOutcome }> {
  const billing = event.billingAddress;
  const response = await fetch(`${processorUrl}/v1/authorizations`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${PROCESSOR_API_KEY}`,
      'content-type': 'application/json',
      // A retry with the same key is answered, not authorized again: the cryptogram is single-use.
      'idempotency-key': payment.reference,
    },
    body: JSON.stringify({
      amount: payment.amount,
      currency: 'USD',
      reference: payment.reference,
      source: paymentSource(event.credentials),
      billingAddress: {
        firstName: billing.firstName,
        lastName: billing.lastName,
        line1: billing.address1,
        city: billing.city,
        state: billing.state,
        postalCode: billing.zipCode,
        country: billing.country,
        ...(billing.phoneNumber ? { phone: billing.phoneNumber } : {}),
      },
    }),
    signal: AbortSignal.timeout(PROCESSOR_TIMEOUT_MS),
  });
  const raw = await response.text();
  return { raw, outcome: outcomeOf(response.status, raw) };
}

interface GatewayAnswer {
  id?: string;
  status?: string;
  response?: { code?: string; message?: string };
  error?: { code?: string; message?: string };
}

/** Only an explicit `AUTHORIZED` approves; anything else — declined, rejected, failed, malformed — does not. */
function outcomeOf(status: number, raw: string): PaymentOutcome {
  let answer: GatewayAnswer;
  try {
    answer = JSON.parse(raw) as GatewayAnswer;
  } catch {
    return { approved: false, code: String(status), message: 'The processor gave an unreadable answer' };
  }
  if (status === 201 && answer.status === 'AUTHORIZED' && answer.id) {
    return { approved: true, transactionId: answer.id };
  }
  const detail = answer.response ?? answer.error ?? {};
  return {
    approved: false,
    code: detail.code ?? String(status),
    message: detail.message ?? 'The processor refused the payment',
  };
}
