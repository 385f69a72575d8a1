/**
 * The payment step: checks what the shopper chose, computes the amounts, moves the order to PROCESSING
 * (one payment per order), authorizes with the merchant's gateway and records the outcome. In the
 * merchant's own authorization mode it hands over a payment-carousel session instead of paying.
 */
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import {
  type AuthorizationRequest,
  type GatewayAccounts,
  type GatewayAddress,
  GatewayError,
  type GatewayResult,
  type MerchantGateway,
  sdkResult,
} from '../gateways/index.js';
import type { Logger } from '../log.js';
import type { Merchant } from '../merchants/index.js';
import type { Order, Orders, PaymentAttempt, TransactionDetails } from '../orders/index.js';
import { Secret } from '../secret.js';
import type { KeyRing } from '../vault/keyring.js';
import type { CardVault } from '../vault/vault.js';
import type { Address, Card, Sessions, Shopper, Wallet } from '../wallet/index.js';
import {
  chargedTotal,
  chooseShipping,
  findMerchant,
  findOpenOrder,
  findOrder,
  paymentToken,
  type Shipping,
  type ShippingChoice,
  shopperAddress,
} from './common.js';
import {
  addressInfo,
  customerInfo,
  type ErrorResult,
  type PaymentSelectedResult,
  type PayResult,
  type PendingResult,
  type SuccessResult,
} from './shapes.js';
import { taxesFor } from './taxes.js';

/** Section 7.2's code for anything unexpected. */
const GENERIC_ERROR = { errorCode: '-1', errorMessage: null } as const;

export interface PayInput extends ShippingChoice {
  paymentId: string;
  /** Entered for this payment; sent to the gateway, never stored. */
  cvv?: string;
  /** The total the shopper was shown (the quote's); the payment is refused if it now costs another. */
  total?: number;
}

export interface PaymentStepDeps {
  keyRing: KeyRing;
  log: Logger;
  orders: Orders;
  merchants: { get(id: string): Promise<Merchant | undefined> };
  wallet: Wallet;
  sessions: Sessions;
  vault: CardVault;
  gateways: GatewayAccounts;
  /** Life of the payment-carousel session of the merchant authorization mode. */
  sessionTtlSeconds: number;
  now?: () => number;
}

interface Choice {
  order: Order;
  merchant: Merchant;
  shopper: Shopper;
  card: Card;
  billing: Address;
  shipping: Shipping;
  taxes: number;
}

/** What the gateway is asked with: the order, whose id is its idempotency key, and the card that pays. */
type Settling = Pick<Choice, 'order' | 'merchant' | 'card' | 'billing'>;

/**
 * How long a payment may stay PROCESSING before another process takes it for one whose process stopped
 * or died between taking the payment and recording the gateway's decision: 10 minutes, more than an ask
 * of the gateway can last (`askLasts`: at most 8 minutes with the longest time-out of 2).
 */
export const STALLED_PAYMENT_MS = 10 * 60_000;
/** Stalled payments finished in one sweep; the next sweep takes the rest. */
const STALLED_BATCH = 100;
/**
 * How long after its order was created a payment the gateway gave no decision for is asked again: 20
 * hours, so that every ask falls within the 24 hours a gateway keeps an idempotency key (the first ask
 * comes within the order's life of an hour). After it, asking could charge again: the order fails with
 * -1, and the log says to check the gateway.
 */
export const UNDECIDED_PAYMENT_MS = 20 * 60 * 60_000;

/**
 * How long one ask of a merchant's gateway can last: its time-out three times (a look-up, then an
 * authorization and its retry after a time-out), and as margin once more, or 5 s if more (the database
 * and vault work around the calls). A payment is asked again only after this, so that two asks with one
 * idempotency key are never in flight together; at most 8 minutes, within STALLED_PAYMENT_MS.
 */
const askLasts = (timeoutMs: number) => 3 * timeoutMs + Math.max(timeoutMs, 5_000);

export class PaymentStep {
  readonly #tokenKey: Buffer;
  readonly #now: () => number;

  constructor(private readonly deps: PaymentStepDeps) {
    this.#tokenKey = deps.keyRing.deriveKey('payment-token');
    this.#now = deps.now ?? Date.now;
  }

  /**
   * Pays `orderId` for the signed-in shopper. A repeated submit never charges twice: the order's state
   * machine lets one payment through (`markProcessing`), the order id is the gateway's idempotency key,
   * and a submit after the outcome answers that outcome again. While the gateway has given no decision
   * (`pending`), a submit asks it again (`#askAgain`).
   */
  async pay(shopperId: string, orderId: string, input: PayInput): Promise<PayResult> {
    const existing = await findOrder(this.deps.orders, orderId);
    if (existing.status === 'SUCCEEDED' || existing.status === 'FAILED') {
      return this.#outcomeOf(existing, shopperId);
    }
    if (existing.status === 'PROCESSING') {
      if (existing.merchantAuthorization) return this.#selectionOf(existing, shopperId);
      return this.#askAgain(existing, shopperId, input);
    }
    const choice = await this.#choose(shopperId, orderId, input);
    const { chargedAmount } = attemptOf(choice);
    if (input.total !== undefined && input.total !== chargedAmount) {
      throw new DomainError(
        'TOTAL_CHANGED',
        `total is ${chargedAmount} now, not ${input.total}: the merchant changed a shipping price or tax rate since the quote; show the new total and pay again.`,
      );
    }
    if (choice.merchant.authorizationMode === 'merchant') return this.#select(choice);
    if (choice.card.needsCvv && !input.cvv) {
      throw new ValidationError('cvv is required: this card needs its security code');
    }
    return this.#authorize(choice, input.cvv);
  }

  async #choose(shopperId: string, orderId: string, input: PayInput): Promise<Choice> {
    const order = await findOpenOrder(this.deps.orders, orderId);
    const merchant = await findMerchant(this.deps.merchants, order);
    const shopper = await this.deps.wallet.getShopper(shopperId);
    const card = await this.deps.wallet.findCard(input.paymentId);
    if (card?.shopperId !== shopperId || card.removedAt !== null) {
      throw new NotFoundError(
        'PAYMENT_METHOD_NOT_FOUND',
        `paymentId: no card ${input.paymentId} in the shopper's wallet.`,
      );
    }
    if (this.deps.wallet.isExpired(card, new Date(this.#now()))) {
      throw new DomainError(
        'PAYMENT_METHOD_EXPIRED',
        `paymentId: the card ending ${card.last4} expired at the end of ${card.expMonth}/${card.expYear}.`,
      );
    }
    const billing = await shopperAddress(
      this.deps.wallet,
      shopperId,
      card.billingAddressId,
      'billing address',
    );
    const shipping = await chooseShipping(this.deps.wallet, merchant, shopperId, input, true);
    const taxes = taxesFor(merchant.taxSettings, order.subtotal, (shipping.address ?? billing).state);
    return { order, merchant, shopper, card, billing, shipping, taxes };
  }

  /**
   * Merchant authorization mode: a payment-carousel session for the merchant's server, bound to the card
   * and the total the shopper chose (its credentials requests may name no other card, nor charge more), and the order
   * PROCESSING with what the shopper chose (out of the expiry sweep; a concurrent submit gets
   * ORDER_STATE_CONFLICT). The session comes first: if the order then refuses, it simply expires unused.
   */
  async #select(choice: Choice): Promise<PaymentSelectedResult> {
    const attempt = attemptOf(choice);
    const session = await this.deps.sessions.create({
      merchantId: choice.merchant.id,
      shopperId: choice.shopper.id,
      ttlSeconds: this.deps.sessionTtlSeconds,
      now: new Date(this.#now()),
      selection: { paymentId: attempt.paymentId, amountLimit: attempt.chargedAmount },
    });
    const selected = await this.deps.orders.markSelected(choice.order.id, attempt, session.id);
    return this.#selectionOf(selected, choice.shopper.id);
  }

  /** The selection of a merchant-authorized order, to its shopper; the same whenever it is asked again. */
  async #selectionOf(order: Order, shopperId: string): Promise<PaymentSelectedResult> {
    const { payment, merchantAuthorization } = order;
    if (!payment || !merchantAuthorization || payment.shopperId !== shopperId) {
      throw new DomainError('ORDER_STATE_CONFLICT', `order ${order.id} has a payment under way.`);
    }
    const { billing, shipping } = await this.#addressesOf(order, shopperId);
    return {
      outcome: 'payment-selected',
      selection: {
        orderId: order.id,
        sessionId: merchantAuthorization.sessionId,
        paymentId: payment.paymentId,
        billingInfo: addressInfo(billing),
        shippingInfo: shipping ? addressInfo(shipping) : {},
        shippingMethod: payment.shippingMethod ?? {},
        taxes: payment.taxAmount,
      },
    };
  }

  async #authorize(choice: Choice, cvv: string | undefined): Promise<PayResult> {
    const attempt = attemptOf(choice);
    // The state machine lets one submit through; a concurrent one gets ORDER_STATE_CONFLICT here.
    const order = await this.deps.orders.markProcessing(choice.order.id, attempt);
    const settled = await this.#settle({ ...choice, order }, attempt.chargedAmount, cvv);
    return this.#outcomeOf(settled, choice.shopper.id);
  }

  /**
   * A submit of the shopper while the order's payment is under way: `pending` while the gateway is being
   * asked, or was last asked too recently for that ask to be over (`askLasts`). After that, the gateway
   * gave no decision: this submit takes the payment (`claimPayment`, so one of several concurrent ones)
   * and settles it as a payment whose answer was lost (`#settleLost`), with the CVV the page still holds.
   * The payment is the one recorded: a submit naming another card is refused.
   */
  async #askAgain(order: Order, shopperId: string, input: PayInput): Promise<PayResult> {
    const { payment } = order;
    if (payment?.shopperId !== shopperId) {
      throw new DomainError('ORDER_STATE_CONFLICT', `order ${order.id} has a payment under way.`);
    }
    if (input.paymentId !== payment.paymentId) {
      throw new DomainError(
        'ORDER_STATE_CONFLICT',
        `paymentId: order ${order.id} has a payment under way with another card (${payment.paymentId}); it cannot change now.`,
      );
    }
    const merchant = await findMerchant(this.deps.merchants, order);
    const card = await this.deps.wallet.findCard(payment.paymentId);
    const gateway = await this.deps.gateways.gatewayOf(merchant.id).catch(() => undefined);
    // Without its card or gateway the payment cannot be asked for: the stalled-payment sweep settles it.
    if (!card || !gateway || order.updatedAt > this.#now() - askLasts(gateway.timeoutMs)) {
      return pending(order);
    }
    if (!(await this.deps.orders.claimPayment(order))) return pending(order);
    const { billing } = await this.#addressesOf(order, shopperId);
    const settling = { order, merchant, card, billing };
    const settled = await this.#settleLost(settling, gateway, payment.chargedAmount, input.cvv);
    return this.#outcomeOf(settled, shopperId);
  }

  /**
   * Finishes the payments left PROCESSING since `before` by a process that stopped or died between taking
   * the payment and recording the gateway's decision, or whose gateway gave no decision in time and whose
   * shopper stopped asking: settles each as a payment whose answer was lost (`#settleLost`, without the
   * CVV, which is never stored). The order then settles as any other, and its webhook goes to the
   * merchant; one still undecided is asked again at the next sweep, until `UNDECIDED_PAYMENT_MS`. A
   * gateway that can neither look a payment up nor replay idempotent requests cannot be asked again
   * without risking a second charge: the order fails with -1, and the log names it for an operator to
   * check against the gateway's records. Returns how many orders were asked for, or given up on.
   */
  async settleStalled(before = this.#now() - STALLED_PAYMENT_MS): Promise<number> {
    let settled = 0;
    for (const order of await this.deps.orders.stalledPayments(before, STALLED_BATCH)) {
      try {
        if (await this.#settleStalled(order)) settled++;
      } catch (error) {
        // Settled meanwhile by the process that took the payment, or by another sweeping one.
        if (error instanceof DomainError && error.errorCode === 'ORDER_STATE_CONFLICT') continue;
        // One order that cannot be settled now (its database read failed, say) holds up none of the others.
        this.deps.log.warn(
          { err: error, orderId: order.id },
          'could not settle a payment left under way; the next sweep tries again',
        );
      }
    }
    return settled;
  }

  /** False when another process or submit took the payment since the sweep read it. */
  async #settleStalled(order: Order): Promise<boolean> {
    // First, so that an order whose gateway or card can no longer be read still ends.
    if (order.createdAt < this.#now() - UNDECIDED_PAYMENT_MS) return this.#giveUp(order);
    const { payment } = order;
    const merchant = await findMerchant(this.deps.merchants, order);
    const gateway = await this.deps.gateways.gatewayOf(merchant.id);
    const card = payment?.shopperId ? await this.deps.wallet.findCard(payment.paymentId) : undefined;
    const { connector } = gateway;
    if (!payment?.shopperId || !card || (!connector.lookup && !connector.supports.idempotentReplay)) {
      return this.#giveUp(order);
    }
    if (!(await this.deps.orders.claimPayment(order))) return false;
    const { billing } = await this.#addressesOf(order, payment.shopperId);
    this.deps.log.warn(
      { orderId: order.id, merchantId: merchant.id },
      'finishing a payment left under way: asking the gateway for its decision',
    );
    const settling = { order, merchant, card, billing };
    await this.#settleLost(settling, gateway, payment.chargedAmount, undefined);
    return true;
  }

  async #giveUp(order: Order): Promise<true> {
    this.deps.log.error(
      { orderId: order.id, merchantId: order.merchantId },
      'a payment left under way cannot be asked for again; the order fails with -1: check the gateway for a charge',
    );
    await this.deps.orders.markFailed(order.id, GENERIC_ERROR.errorCode, GENERIC_ERROR.errorMessage);
    return true;
  }

  /**
   * Settles a payment whose answer was lost (a time-out, a process that died): the decision the gateway
   * made, looked up by the order's id, its idempotency key; when it made none, the payment is authorized
   * now with that key (with the CVV if the shopper's page still holds it). Where the gateway cannot look
   * payments up, the authorization is sent again instead, which it answers with its first decision only
   * if the request is the same. Whatever keeps the gateway from answering leaves the order PROCESSING,
   * asked again later: the first request may have been authorized, so it is never failed for it.
   */
  async #settleLost(
    settling: Settling,
    gateway: MerchantGateway,
    amount: number,
    cvv: string | undefined,
  ): Promise<Order> {
    const { order } = settling;
    const { connector, credentials } = gateway;
    let answer: GatewayResult | GatewayError | undefined;
    if (connector.lookup) {
      answer = await connector.lookup(order.id, credentials).catch(asGatewayError);
    } else if (!connector.supports.idempotentReplay) {
      // Sent again, it could be charged twice: the stalled-payment sweep gives it up.
      return order;
    }
    answer ??= await this.#callGateway(settling, amount, cvv);
    if (answer instanceof GatewayError) {
      this.deps.log.warn(
        { err: answer, orderId: order.id, kind: answer.kind },
        'the gateway gave no decision for a payment under way; it stays under way and is asked for again',
      );
      return order;
    }
    return this.#record(settling, answer);
  }

  /**
   * Asks the merchant's gateway for `amount` and records its decision: SUCCEEDED, or FAILED with its
   * code. With no decision to record (`undecided`) the order stays PROCESSING, as `settling` has it.
   */
  async #settle(settling: Settling, amount: number, cvv: string | undefined): Promise<Order> {
    const answer = await this.#callGateway(settling, amount, cvv);
    if (answer instanceof GatewayError) {
      const undecided = answer.kind === 'undecided';
      this.deps.log.warn(
        { err: answer, orderId: settling.order.id, kind: answer.kind },
        undecided
          ? 'the gateway gave no decision in time; the payment stays under way and is asked for again'
          : 'the gateway gave no decision; the order fails with -1',
      );
      if (undecided) return settling.order;
    }
    return this.#record(settling, answer);
  }

  /** Records the gateway's decision, or the -1 of a GatewayError: SUCCEEDED, or FAILED with its code. */
  async #record(settling: Settling, answer: GatewayResult | GatewayError): Promise<Order> {
    const { order, merchant, card } = settling;
    const result = sdkResult(answer instanceof GatewayError ? answer : answer.outcome);
    if (result.kind === 'error' || answer instanceof GatewayError) {
      // sdkResult gives every GatewayError the generic -1; the fallback only satisfies the types.
      const { errorCode, errorMessage } = result.kind === 'error' ? result : GENERIC_ERROR;
      return this.deps.orders.markFailed(order.id, errorCode, errorMessage);
    }
    const details: TransactionDetails = {
      networkTransactionId: answer.networkTransactionId,
      gatewayTransactionId: answer.gatewayTransactionId,
      gatewayResponse: answer.rawResponse,
      ...(merchant.variant === 'connected' && answer.stpReferenceNum !== undefined
        ? { stpReferenceNum: answer.stpReferenceNum }
        : {}),
    };
    const succeeded = await this.deps.orders.markSucceeded(order.id, details);
    const { wallet } = this.deps;
    // The card's stored credential at this merchant on its first success there. Read first: a write
    // that changes nothing would still wait its turn for the database on every later payment.
    if (
      answer.networkTransactionId !== null &&
      (await wallet.storedCredentialsIdentifier(card.id, merchant.id)) === null
    ) {
      await wallet.recordStoredCredentialsIdentifier(card.id, merchant.id, answer.networkTransactionId);
    }
    return succeeded;
  }

  /**
   * The gateway's decision, or the GatewayError that stands for none (any other failure becomes one). The
   * stored credential is the card's at this merchant: `initial` until a payment there succeeds, then
   * `subsequent` naming that payment's network transaction id, never one of another merchant's.
   */
  async #callGateway(
    settling: Settling,
    amount: number,
    cvv: string | undefined,
  ): Promise<GatewayResult | GatewayError> {
    const { order, merchant, card, billing } = settling;
    try {
      const gateway = await this.deps.gateways.gatewayOf(merchant.id);
      const previous = await this.deps.wallet.storedCredentialsIdentifier(card.id, merchant.id);
      const request: AuthorizationRequest = {
        amount,
        currency: order.currency,
        orderReference: order.id,
        source: {
          type: 'card',
          pan: await this.deps.vault.reveal(card.vaultId),
          expMonth: card.expMonth,
          expYear: card.expYear,
          ...(cvv ? { cvv: new Secret(cvv) } : {}),
        },
        billingAddress: gatewayAddress(billing),
        storedCredential:
          previous === null
            ? { kind: 'initial', initiator: 'cardholder' }
            : { kind: 'subsequent', initiator: 'cardholder', previousNetworkTransactionId: previous },
        variant: merchant.variant,
        idempotencyKey: order.id,
      };
      return await gateway.connector.authorize(request, gateway.credentials);
    } catch (error) {
      return asGatewayError(error);
    }
  }

  /** The answer of a paid, failed or undecided order, to its shopper; the same whenever it is asked again. */
  async #outcomeOf(order: Order, shopperId: string): Promise<SuccessResult | ErrorResult | PendingResult> {
    const { payment } = order;
    if (!payment || payment.shopperId !== shopperId) {
      throw new DomainError(
        'ORDER_STATE_CONFLICT',
        `order ${order.id} is ${order.status}; this checkout has ended.`,
      );
    }
    if (order.status === 'PROCESSING') return pending(order);
    if (order.status === 'FAILED') {
      return this.#errorResult(order.id, order.error?.code ?? '-1', order.error?.message ?? null);
    }
    if (!order.transactionDetails) throw new Error(`order ${order.id} succeeded without transaction details`);
    const { wallet } = this.deps;
    const shopper = await wallet.getShopper(shopperId);
    const card = await wallet.findCard(payment.paymentId);
    if (!card) throw new Error(`card ${payment.paymentId} of order ${order.id} no longer exists`);
    const { billing, shipping } = await this.#addressesOf(order, shopperId);
    const storedCredentialsIdentifier = await wallet.storedCredentialsIdentifier(card.id, order.merchantId);
    return {
      outcome: 'success',
      orderId: order.id,
      customerInfo: customerInfo(shopper, card, billing, {
        paymentToken: paymentToken(this.#tokenKey, order.id, card.id),
        storedCredentialsIdentifier,
      }),
      shippingInfo: shipping ? addressInfo(shipping) : {},
      billingInfo: addressInfo(billing),
      shippingMethod: payment.shippingMethod ?? {},
      taxes: payment.taxAmount,
      transactionDetails: order.transactionDetails,
    };
  }

  /** The billing and shipping addresses recorded with the order's payment. */
  async #addressesOf(order: Order, shopperId: string): Promise<{ billing: Address; shipping?: Address }> {
    // Removed since, they still say where this order went.
    const addresses = await this.deps.wallet.listAddresses(shopperId, { removed: true });
    const byExternalId = (externalId: string | null | undefined) =>
      addresses.find((address) => address.externalId === externalId);
    const billing = byExternalId(order.payment?.billingAddressId);
    if (!billing) throw new Error(`billing address of order ${order.id} no longer exists`);
    return { billing, shipping: byExternalId(order.payment?.shippingAddressId) };
  }

  #errorResult(orderId: string, errorCode: string, errorMessage: string | null): ErrorResult {
    return { outcome: 'error', orderId, errorCode, errorMessage };
  }
}

function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError
    ? error
    : new GatewayError('unexpected_response', 'the payment could not be sent', { cause: error });
}

function pending(order: Order): PendingResult {
  return { outcome: 'pending', orderId: order.id };
}

/** What the shopper chose and what it costs: subtotal + shipping + taxes, integer cents. */
function attemptOf({ order, shopper, card, billing, shipping, taxes }: Choice): PaymentAttempt {
  const shippingAmount = shipping.method?.price ?? 0;
  return {
    email: shopper.email,
    shopperId: shopper.id,
    paymentId: card.id,
    shippingAddressId: shipping.address?.externalId ?? null,
    billingAddressId: billing.externalId,
    shippingMethod: shipping.method,
    shippingAmount,
    taxAmount: taxes,
    chargedAmount: chargedTotal(order.subtotal, shippingAmount, taxes),
  };
}

function gatewayAddress(address: Address): GatewayAddress {
  return {
    firstName: address.firstName,
    lastName: address.lastName,
    address1: address.address1,
    address2: address.address2,
    city: address.city,
    state: address.state,
    zip: address.zip,
    country: address.country,
    phoneNumber: address.phoneNumber,
  };
}
