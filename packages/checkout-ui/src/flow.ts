import type { EnrolmentInput, OrderSummary, Quote, Wallet, WalletAddress, WalletCard } from './api.js';

/**
 * The checkout's steps as one pure reducer: components dispatch what happened, the reducer decides where
 * the shopper is. Requests live in the components (app.tsx); nothing here touches the network or the DOM.
 *
 *   loading ─▶ email ─┬─(known)──▶ code ─▶ card ─▶ address ─▶ shipping ─▶ summary ─▶ done
 *      │              └─(unknown)─▶ enrol ─▶ code ─┘   (no shipping methods: card ─▶ summary)
 *      └─▶ unavailable
 *
 * "Change" on the summary opens one step; its Continue and Back lead straight back to the summary.
 */

export type Step =
  | 'loading'
  | 'unavailable'
  | 'email'
  | 'enrol'
  | 'code'
  | 'card'
  | 'address'
  | 'shipping'
  | 'summary'
  | 'done';

/**
 * What the enrolment form collected (`POST …/enrol` without the email). Kept in memory while the code is
 * out, to resend it (a new enrolment replaces the old) or refill the form; the CVV outlives it, for the
 * first payment only.
 */
export type EnrolmentDraft = Omit<EnrolmentInput, 'email'>;

export interface CodeState {
  /** Where the code went, masked by the server (`t***r@example.com`). */
  destination: string;
  /** Epoch ms after which "Resend code" is enabled (30 s per email on the server). */
  resendAt: number;
  triesLeft: number | null;
  status: 'open' | 'locked' | 'expired';
  /** Sent again from the Code step ("Resend code", "Send a new code"): the step says so. */
  resent: boolean;
  /** How many codes were refused: each refusal clears the field. */
  refused: number;
}

export type Outcome =
  | { kind: 'success' }
  | { kind: 'selected' }
  | { kind: 'declined'; message: string }
  /** The page can no longer ask (its sign-in ended) while the gateway has not decided. */
  | { kind: 'pending' };

export interface FlowState {
  step: Step;
  order: OrderSummary | null;
  email: string;
  enrolment: EnrolmentDraft | null;
  code: CodeState | null;
  wallet: Wallet | null;
  paymentId: string | null;
  addressId: number | null;
  methodId: string | null;
  quote: Quote | null;
  /**
   * The security code typed with a card (at enrolment or "Add a card"), sent when that card pays, never
   * stored. Tied to its card: another card selected does not get it.
   */
  typedCvv: { paymentId: string; cvv: string } | null;
  busy: boolean;
  /**
   * The gateway has not decided the payment yet: the page asks again until it does, and the shopper may
   * close the checkout meanwhile (the order settles without them; the merchant hears of it by webhook).
   */
  paymentPending: boolean;
  /** The step was opened by "Change" on the summary: Continue and Back return to the summary. */
  returnToSummary: boolean;
  error: string | null;
  /** Said on the Email step once the shopper deleted their wallet, or on the Code step why it is asked. */
  notice: string | null;
  outcome: Outcome | null;
}

export type FlowEvent =
  | { type: 'order-loaded'; order: OrderSummary }
  | { type: 'order-failed'; message: string }
  | { type: 'submitted' }
  /** The gateway gave no decision yet; `message` says so while the page asks again. */
  | { type: 'payment-pending'; message: string }
  | { type: 'failed'; message: string }
  | { type: 'error-dismissed' }
  | { type: 'code-sent'; email: string; destination: string; now: number; notice?: string }
  | { type: 'enrol-required'; email: string }
  | { type: 'enrolment-filled'; draft: EnrolmentDraft }
  | {
      type: 'code-rejected';
      reason: 'invalid' | 'locked' | 'expired';
      triesLeft: number | null;
      message: string;
    }
  | { type: 'code-throttled'; retryAt: number; message: string }
  | { type: 'signed-in'; wallet: Wallet; paymentId?: string | undefined }
  | { type: 'card-selected'; paymentId: string }
  | { type: 'address-selected'; addressId: number }
  /** Saved by the server; `billing` when typed as a card's billing address, which leaves the shipping choice be. */
  | { type: 'address-added'; address: WalletAddress; billing?: true }
  /** Saved by the server, or renewed (the same `paymentId`); `cvv` is the one typed with it, if asked. */
  | { type: 'card-added'; card: WalletCard; cvv: string | null }
  /** The wallet as the server answers it after a card was removed. */
  | { type: 'card-removed'; wallet: Wallet }
  /** The address as edited (a new `addressId` if its values changed), and the wallet as the server answers it. */
  | { type: 'address-edited'; address: WalletAddress; wallet: Wallet }
  /** The card as edited, and the wallet as the server answers it. */
  | { type: 'card-edited'; card: WalletCard; wallet: Wallet }
  /** The wallet as the server answers it after an address was removed. */
  | { type: 'address-removed'; wallet: Wallet }
  /** The shopper deleted their wallet: signed out, back to the Email step. */
  | { type: 'wallet-deleted' }
  /** "Not you?": signed out, back to an empty Email step for someone else's email. */
  | { type: 'signed-out' }
  | { type: 'method-selected'; methodId: string }
  | { type: 'next' }
  | { type: 'back' }
  | { type: 'go'; step: 'card' | 'address' | 'shipping' }
  | { type: 'quoted'; quote: Quote }
  /** The payment was refused because the total changed since the quote: the new quote, and why. */
  | { type: 'repriced'; quote: Quote; message: string }
  | { type: 'session-expired' }
  | { type: 'change-email' }
  | { type: 'finished'; outcome: Outcome };

/** 30 s: the server's resend throttle per email (docs/internals/checkout-protocol.md §3). */
export const RESEND_GAP_MS = 30_000;

export const initialState: FlowState = {
  step: 'loading',
  order: null,
  email: '',
  enrolment: null,
  code: null,
  wallet: null,
  paymentId: null,
  addressId: null,
  methodId: null,
  quote: null,
  typedCvv: null,
  busy: false,
  paymentPending: false,
  returnToSummary: false,
  error: null,
  notice: null,
  outcome: null,
};

export const ships = (state: FlowState): boolean => (state.order?.shippingMethods.length ?? 0) > 0;

/** The steps after sign-in, in order, for this merchant. */
export function walletSteps(state: FlowState): Step[] {
  return ships(state) ? ['card', 'address', 'shipping', 'summary'] : ['card', 'summary'];
}

export const selectableCards = (wallet: Wallet | null): WalletCard[] =>
  wallet?.cards.filter((card) => !card.expired) ?? [];

export const selectedCard = (state: FlowState): WalletCard | null =>
  state.wallet?.cards.find((card) => card.paymentId === state.paymentId) ?? null;

/** The security code typed with the selected card, if it was typed in this checkout. */
export const knownCvv = (state: FlowState): string | null =>
  state.typedCvv?.paymentId === state.paymentId ? state.typedCvv.cvv : null;

/** The security code typed with a card, if one was (none is where the merchant pays itself). */
const typed = (paymentId: string | null, cvv: string | null | undefined): FlowState['typedCvv'] =>
  paymentId && cvv ? { paymentId, cvv } : null;

/** Can the shopper leave the current step forward? */
export function canContinue(state: FlowState): boolean {
  switch (state.step) {
    case 'card':
      return selectedCard(state)?.expired === false;
    case 'address':
      return state.wallet?.addresses.some((a) => a.addressId === state.addressId) ?? false;
    case 'shipping':
      return state.order?.shippingMethods.some((m) => m.externalId === state.methodId) ?? false;
    case 'summary':
      return state.quote !== null && selectedCard(state)?.expired === false;
    default:
      return false;
  }
}

function defaultCard(wallet: Wallet, preferred?: string): string | null {
  const usable = selectableCards(wallet);
  return (
    usable.find((card) => card.paymentId === preferred)?.paymentId ??
    usable.find((card) => card.isDefault)?.paymentId ??
    usable[0]?.paymentId ??
    null
  );
}

/**
 * The wallet with `card` in it: in place of the card with the same `paymentId` (a renewal), else added,
 * first when it is the default as the server lists them. The server keeps one default card, so a default
 * `card` takes the mark from the others.
 */
function withCard(wallet: Wallet, card: WalletCard): Wallet {
  const renewed = wallet.cards.some((c) => c.paymentId === card.paymentId);
  const others = wallet.cards.map((c) => (card.isDefault && c.isDefault ? { ...c, isDefault: false } : c));
  const cards = renewed
    ? others.map((c) => (c.paymentId === card.paymentId ? card : c))
    : card.isDefault
      ? [card, ...others]
      : [...others, card];
  return { ...wallet, cards };
}

function defaultAddress(wallet: Wallet): number | null {
  return (
    wallet.addresses.find((a) => a.isDefaultShipping)?.addressId ??
    wallet.addresses.find((a) => a.isDefaultBilling)?.addressId ??
    wallet.addresses[0]?.addressId ??
    null
  );
}

const idle = { busy: false, error: null, notice: null } as const;

/** Back at the Email step, signed out: the order, the email typed and the shipping method stay. */
const signedOut = (state: FlowState): FlowState => ({
  ...initialState,
  order: state.order,
  email: state.email,
  methodId: state.methodId,
  step: 'email',
});

export function reduce(state: FlowState, event: FlowEvent): FlowState {
  switch (event.type) {
    case 'order-loaded':
      return {
        ...state,
        ...idle,
        order: event.order,
        step: 'email',
        methodId: event.order.shippingMethods[0]?.externalId ?? null,
      };
    case 'order-failed':
      return { ...state, ...idle, step: 'unavailable', error: event.message };
    case 'submitted':
      return { ...state, busy: true, error: null };
    case 'payment-pending':
      return { ...state, busy: true, paymentPending: true, error: null, notice: event.message };
    case 'failed':
      return { ...state, busy: false, error: event.message };
    case 'error-dismissed':
      return { ...state, error: null };
    case 'code-sent':
      return {
        ...state,
        ...idle,
        notice: event.notice ?? null,
        step: 'code',
        email: event.email,
        code: {
          destination: event.destination,
          resendAt: event.now + RESEND_GAP_MS,
          triesLeft: null,
          status: 'open',
          resent: state.step === 'code',
          refused: 0,
        },
      };
    case 'enrol-required':
      return { ...state, ...idle, step: 'enrol', email: event.email };
    case 'enrolment-filled':
      return { ...state, busy: true, error: null, enrolment: event.draft };
    case 'code-rejected':
      if (!state.code) return state;
      return {
        ...state,
        busy: false,
        error: event.message,
        code: {
          ...state.code,
          triesLeft: event.reason === 'invalid' ? event.triesLeft : 0,
          status: event.reason === 'invalid' ? 'open' : event.reason,
          refused: state.code.refused + 1,
        },
      };
    case 'code-throttled':
      return {
        ...state,
        busy: false,
        error: event.message,
        code: state.code && { ...state.code, resendAt: event.retryAt },
      };
    case 'signed-in': {
      const paymentId = defaultCard(event.wallet, event.paymentId);
      // A new shopper has just chosen their one card: straight on to where it ships.
      const steps = walletSteps(state);
      const step = (state.enrolment && paymentId ? steps[1] : steps[0]) as Step;
      return {
        ...state,
        ...idle,
        wallet: event.wallet,
        // The server created the wallet at verify; only the security code stays, for the new card's payment.
        typedCvv: typed(paymentId, state.enrolment?.card.cvv),
        enrolment: null,
        code: null,
        paymentId,
        addressId: defaultAddress(event.wallet),
        step,
        returnToSummary: false,
        quote: null,
      };
    }
    case 'card-selected':
      return { ...state, paymentId: event.paymentId, quote: null, error: null };
    case 'address-selected':
      return { ...state, addressId: event.addressId, quote: null, error: null };
    case 'address-added':
      if (!state.wallet) return state;
      return {
        ...state,
        ...idle,
        wallet: { ...state.wallet, addresses: [...state.wallet.addresses, event.address] },
        addressId: event.billing ? (state.addressId ?? event.address.addressId) : event.address.addressId,
        quote: null,
      };
    case 'card-added':
      if (!state.wallet) return state;
      return {
        ...state,
        ...idle,
        wallet: withCard(state.wallet, event.card),
        paymentId: event.card.paymentId,
        typedCvv: typed(event.card.paymentId, event.cvv),
        quote: null,
      };
    case 'card-removed':
      return {
        ...state,
        ...idle,
        wallet: event.wallet,
        // The selected card if it can still pay, else the one the server now marks default.
        paymentId: defaultCard(event.wallet, state.paymentId ?? undefined),
        typedCvv: event.wallet.cards.some((c) => c.paymentId === state.typedCvv?.paymentId)
          ? state.typedCvv
          : null,
        quote: null,
      };
    case 'address-edited':
      return { ...state, ...idle, wallet: event.wallet, addressId: event.address.addressId, quote: null };
    case 'card-edited':
      return { ...state, ...idle, wallet: event.wallet, paymentId: event.card.paymentId, quote: null };
    case 'address-removed':
      return {
        ...state,
        ...idle,
        wallet: event.wallet,
        // The selected address if it is still there, else the one the server now marks default.
        addressId: event.wallet.addresses.some((a) => a.addressId === state.addressId)
          ? state.addressId
          : defaultAddress(event.wallet),
        quote: null,
      };
    case 'method-selected':
      return { ...state, methodId: event.methodId, quote: null, error: null };
    case 'next': {
      if (!canContinue(state)) return state;
      if (state.returnToSummary) return { ...state, ...idle, step: 'summary', returnToSummary: false };
      const steps = walletSteps(state);
      const next = steps[steps.indexOf(state.step) + 1];
      return next ? { ...state, ...idle, step: next } : state;
    }
    case 'back': {
      if (state.busy) return state;
      if (state.step === 'code' || state.step === 'enrol') return reduce(state, { type: 'change-email' });
      if (state.returnToSummary) return { ...state, ...idle, step: 'summary', returnToSummary: false };
      const steps = walletSteps(state);
      const previous = steps[steps.indexOf(state.step) - 1];
      return previous ? { ...state, ...idle, step: previous } : state;
    }
    case 'go':
      if (state.busy || !walletSteps(state).includes(event.step) || !state.wallet) return state;
      return { ...state, ...idle, step: event.step, returnToSummary: state.step === 'summary' };
    case 'quoted':
      return { ...state, busy: false, quote: event.quote };
    case 'repriced':
      return { ...state, busy: false, quote: event.quote, error: event.message };
    case 'session-expired':
      return { ...signedOut(state), error: 'Your session has ended. Sign in again to continue.' };
    case 'wallet-deleted':
      return {
        ...signedOut(state),
        notice: 'Your wallet was deleted. To pay, enter your email and save a card again.',
      };
    case 'signed-out':
      return {
        ...signedOut(state),
        email: '',
        notice: 'You are signed out. Enter your email to check out with your wallet.',
      };
    case 'change-email':
      return { ...state, ...idle, step: 'email', code: null, enrolment: null, returnToSummary: false };
    case 'finished':
      return { ...state, ...idle, step: 'done', outcome: event.outcome, typedCvv: null };
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}
