import { useCallback, useEffect, useReducer, useRef, useState } from 'preact/hooks';
import {
  type AddressInput,
  ApiError,
  type CheckoutApi,
  type OrderSummary,
  type Selection,
  type Wallet,
} from './api.js';
import type { CheckoutConfig } from './config.js';
import {
  type EnrolmentDraft,
  type FlowEvent,
  type FlowState,
  initialState,
  knownCvv,
  reduce,
  selectedCard,
} from './flow.js';
import { FOCUSABLE, wrapTarget } from './focus-trap.js';
import type { Messenger } from './messages.js';
import { formatMoney } from './money.js';
import { EnrolStep } from './steps/enrol.js';
import { CodeStep, codeErrorMessage, EmailStep } from './steps/sign-in.js';
import { DoneStep, SummaryStep } from './steps/summary.js';
import { AddressStep, CardStep, type NewCard, ShippingStep } from './steps/wallet.js';
import { Alert, StepTitle } from './ui.js';

const message = (error: unknown): string =>
  error instanceof Error ? error.message : 'Something went wrong. Try again.';

/** Why the Code step asks a shopper signed in by a remembered device for a code. */
const DELETE_NEEDS_CODE =
  'To delete your wallet, confirm it is you: enter the code we sent, then choose Delete my wallet again.';

/** Why the Code step asks for a code before a new or changed address is saved. */
const ADDRESS_NEEDS_CODE =
  'To save a new or changed address, confirm it is you: enter the code we sent. The address is saved once the code is verified.';

/**
 * A change a sign-in by a remembered device may not make: the step it was asked on and the change again,
 * made once a code signs the same shopper in. Kept in memory only, and dropped with the email changed.
 */
interface AfterCode {
  email: string;
  step: 'card' | 'address';
  change: () => Promise<void>;
}

/** 3 s between submits of a payment the gateway has not decided; the server asks it far less often. */
const PENDING_RECHECK_MS = 3_000;
const PENDING_NOTICE =
  'Your bank has not confirmed the payment yet. We are still asking, and you will not be charged twice. You may close this window: the shop will hear the outcome.';

/** Said while the payment is under way, and again to a shopper who tries to close the checkout meanwhile. */
const PAYING_NOTICE = 'Payment in progress…';
const PAYING_CLOSE_NOTICE =
  'Payment in progress… Wait for the answer before closing: it comes within 30 seconds.';
/**
 * A payment that got no answer (a time-out, a lost connection) may have been made: the same submit again,
 * with the same Idempotency-Key, answers its outcome or pays once.
 */
const PAY_UNANSWERED =
  'We got no answer about your payment. It may have gone through: trying again is safe and will not charge you twice.';

/** A random Idempotency-Key: crypto.randomUUID where the context allows it. */
const newKey = (): string =>
  typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

export function App({
  config,
  api,
  messenger,
}: {
  config: CheckoutConfig;
  api: CheckoutApi;
  messenger: Messenger;
}) {
  const [state, dispatch] = useReducer(reduce, initialState);
  const latest = useRef<FlowState>(state);
  latest.current = state;
  const payKey = useRef<{ body: string; key: string } | null>(null);
  const stepRef = useRef<HTMLDivElement>(null);
  const afterCode = useRef<AfterCode | null>(null);
  /** The shopper tried to close the checkout while the payment was under way. */
  const [closeAsked, setCloseAsked] = useState(false);

  /**
   * Errors every request shares: an ended sign-in starts over at the email, unless this device remembers
   * the same shopper, who is signed in again and asked to try once more; the rest is shown.
   */
  const fail = useCallback(
    async (error: unknown) => {
      if (error instanceof ApiError && error.status === 401 && api.signedIn) {
        api.forgetToken();
        if (api.remembersDevice && (await api.resume(latest.current.wallet?.email))) {
          return dispatch({
            type: 'failed',
            message: 'Your sign-in had timed out: you are signed in again. Try again.',
          });
        }
        return dispatch({ type: 'session-expired' });
      }
      dispatch({ type: 'failed', message: message(error) });
    },
    [api],
  );

  /** Sends a code to `email`; `notice` says on the Code step why it is asked. */
  const requestCode = useCallback(
    async (email: string, notice?: string) => {
      dispatch({ type: 'submitted' });
      try {
        const answer = await api.requestCode(email);
        if (answer.status === 'enrol') dispatch({ type: 'enrol-required', email });
        else {
          dispatch({ type: 'code-sent', email, destination: answer.destination, now: Date.now(), notice });
        }
      } catch (error) {
        if (error instanceof ApiError && error.errorCode === 'OTP_THROTTLED' && latest.current.code) {
          const wait = error.retryAfterSeconds ?? 30;
          return dispatch({
            type: 'code-throttled',
            retryAt: Date.now() + wait * 1000,
            message: error.message,
          });
        }
        fail(error);
      }
    },
    [api, fail],
  );

  /**
   * The order shows once loaded. A device that remembers the shopper (for a guest redirect, that shopper)
   * opens on the wallet, with no code; otherwise a guest redirect asks for the code at once.
   */
  const start = async (order: OrderSummary) => {
    if (api.remembersDevice && (await api.resume(config.email ?? undefined))) {
      try {
        const wallet = await api.getWallet();
        dispatch({ type: 'order-loaded', order });
        return dispatch({ type: 'signed-in', wallet });
      } catch {
        api.forgetToken();
      }
    }
    dispatch({ type: 'order-loaded', order });
    if (config.email) void requestCode(config.email);
  };

  // Load the order, then sign in or ask for the email.
  useEffect(() => {
    messenger.send({ type: 'ready' });
    api.getOrder().then(
      (order) => {
        if (order.theme && !config.theme) document.documentElement.dataset.theme = order.theme;
        void start(order);
      },
      (error) =>
        dispatch({
          type: 'order-failed',
          message:
            error instanceof ApiError && error.status === 404
              ? 'This checkout has ended. Close this window and start again from the shop.'
              : message(error),
        }),
    );
  }, []);

  const close = useCallback(() => {
    const { step, busy, paymentPending } = latest.current;
    // A payment under way finishes first: closing now would leave the shopper unsure whether they paid.
    // One the gateway is slow to decide may be left: the page has said so, and the order settles anyway.
    if (busy && step === 'summary' && !paymentPending) return setCloseAsked(true);
    if (step !== 'done' && step !== 'unavailable' && !paymentPending) api.close();
    messenger.send({ type: 'close' });
  }, [api, messenger]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        close();
      } else if (event.key === 'Tab') {
        // Focus stays in the checkout: Tab past its last control would leave the frame (issue 3 §2).
        const focusables = Array.from(document.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
          (element) => element.getClientRects().length > 0,
        );
        const target = wrapTarget(focusables, document.activeElement as HTMLElement | null, event.shiftKey);
        if (target) {
          event.preventDefault();
          target.focus();
        }
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [close]);

  // Each new step takes focus: its first field, or its title.
  useEffect(() => {
    const root = stepRef.current;
    if (!root) return;
    const target =
      root.querySelector<HTMLElement>('[data-autofocus]:not([disabled])') ?? root.querySelector('h2');
    target?.focus();
  }, [state.step]);

  const verify = async (code: string, rememberDevice: boolean) => {
    const { email, enrolment } = latest.current;
    dispatch({ type: 'submitted' });
    try {
      await api.verifyCode(email, code, rememberDevice);
    } catch (error) {
      if (error instanceof ApiError) {
        const reason = ({ OTP_INVALID: 'invalid', OTP_LOCKED: 'locked', OTP_EXPIRED: 'expired' } as const)[
          error.errorCode as 'OTP_INVALID'
        ];
        if (reason) {
          return dispatch({
            type: 'code-rejected',
            reason,
            triesLeft: error.triesLeft,
            message: codeErrorMessage(reason, error.triesLeft),
          });
        }
      }
      if (error instanceof ApiError && error.errorCode === 'ENROLMENT_NOT_FOUND' && enrolment) {
        // The enrolment waited too long (10 minutes): the form again, still filled, to send it anew.
        dispatch({ type: 'enrol-required', email });
      }
      return fail(error);
    }
    let wallet: Wallet;
    try {
      // For a new shopper, verify has just created the wallet: its one card is the default.
      wallet = await api.getWallet();
    } catch (error) {
      return fail(error);
    }
    dispatch({ type: 'signed-in', wallet });
    const pending = afterCode.current;
    afterCode.current = null;
    if (pending && pending.email.toLowerCase() === wallet.email.toLowerCase()) {
      dispatch({ type: 'go', step: pending.step });
      await change(pending.change);
    }
  };

  // A change waiting for a code is not made for whoever signs in with another email.
  useEffect(() => {
    if (state.step === 'email') afterCode.current = null;
  }, [state.step]);

  /** A new shopper's form: the server checks the card and sends the code (again, for "Resend code"). */
  const enrol = async (draft: EnrolmentDraft) => {
    dispatch({ type: 'enrolment-filled', draft });
    const { email } = latest.current;
    try {
      const answer = await api.enrol({ email, ...draft });
      if (answer.status === 'sent')
        dispatch({ type: 'code-sent', email, destination: answer.destination, now: Date.now() });
      else dispatch({ type: 'failed', message: 'The code could not be sent. Try again.' });
    } catch (error) {
      if (
        error instanceof ApiError &&
        error.errorCode === 'OTP_THROTTLED' &&
        latest.current.step === 'code'
      ) {
        const wait = error.retryAfterSeconds ?? 30;
        return dispatch({
          type: 'code-throttled',
          retryAt: Date.now() + wait * 1000,
          message: error.message,
        });
      }
      // A refused card or address: back on the form (kept filled) with the server's reason.
      if (latest.current.step === 'code') dispatch({ type: 'enrol-required', email });
      fail(error);
    }
  };

  /**
   * A card's billing address typed in, saved before the card for its `addressId`. Into the wallet at once,
   * so a refused card is tried again with it rather than saving it twice.
   */
  const saveBilling = async (billing: AddressInput): Promise<number> => {
    const address = await api.addAddress(billing);
    dispatch({ type: 'address-added', address, billing: true });
    dispatch({ type: 'submitted' });
    return address.addressId;
  };

  /**
   * A change to the wallet, made busy. One that saves an address, refused to a sign-in by a remembered
   * device (`CODE_REQUIRED`), sends a code to the wallet's email and is made again once it is verified.
   */
  const change = async (save: () => Promise<void>) => {
    dispatch({ type: 'submitted' });
    try {
      await save();
    } catch (error) {
      const { wallet, step } = latest.current;
      if (error instanceof ApiError && error.errorCode === 'CODE_REQUIRED' && wallet) {
        if (step === 'card' || step === 'address')
          afterCode.current = { email: wallet.email, step, change: save };
        return requestCode(wallet.email, ADDRESS_NEEDS_CODE);
      }
      fail(error);
    }
  };

  /** "Add a card", with a saved billing address or a typed one saved first. */
  const addCard = ({ card, billing, cvv }: NewCard) =>
    change(async () => {
      const billingAddressId = typeof billing === 'number' ? billing : await saveBilling(billing);
      dispatch({ type: 'card-added', card: await api.addCard({ ...card, billingAddressId }), cvv });
      dispatch({ type: 'next' });
    });

  /**
   * "Remove": one card after the other; the last answer is the wallet without them. When one fails, the
   * wallet shows the ones already gone, and the error.
   */
  const removeCards = async (paymentIds: string[]) => {
    dispatch({ type: 'submitted' });
    let wallet: Wallet | undefined;
    try {
      for (const paymentId of paymentIds) wallet = await api.removeCard(paymentId);
    } catch (error) {
      if (wallet) dispatch({ type: 'card-removed', wallet });
      return fail(error);
    }
    if (wallet) dispatch({ type: 'card-removed', wallet });
  };

  /** "Not you? Sign out": back to an empty Email step, whatever the server answered. */
  const signOut = async () => {
    dispatch({ type: 'submitted' });
    await api.signOut();
    dispatch({ type: 'signed-out' });
  };

  /**
   * "Delete my wallet": on success the Email step says so; the sign-in ended with the wallet. A sign-in
   * by a remembered device is not proof enough for that: a code is sent, and once it is verified the
   * shopper deletes again.
   */
  const deleteWallet = async () => {
    dispatch({ type: 'submitted' });
    try {
      await api.deleteWallet();
      dispatch({ type: 'wallet-deleted' });
    } catch (error) {
      const email = latest.current.wallet?.email;
      if (error instanceof ApiError && error.errorCode === 'CODE_REQUIRED' && email) {
        afterCode.current = null;
        return requestCode(email, DELETE_NEEDS_CODE);
      }
      fail(error);
    }
  };

  /** "Edit this card" / "Edit this address", saved: the step goes on with the wallet the server answers. */
  const edit = (save: () => Promise<FlowEvent>) =>
    change(async () => {
      dispatch(await save());
      dispatch({ type: 'next' });
    });

  const removeAddress = async (addressId: number) => {
    dispatch({ type: 'submitted' });
    try {
      dispatch({ type: 'address-removed', wallet: await api.removeAddress(addressId) });
    } catch (error) {
      fail(error);
    }
  };

  const selection = (s: FlowState): Selection => ({
    paymentId: s.paymentId as string,
    ...(s.order?.shippingMethods.length && s.addressId !== null
      ? { shippingAddressId: s.addressId, shippingMethodId: s.methodId ?? undefined }
      : {}),
  });

  // The summary needs a quote for the current selection.
  useEffect(() => {
    if (state.step !== 'summary' || state.quote || state.busy || state.error) return;
    let current = true;
    api.quote(selection(state)).then(
      (quote) => current && dispatch({ type: 'quoted', quote }),
      (error) => {
        if (current) void fail(error);
      },
    );
    return () => {
      current = false;
    };
  }, [state.step, state.quote, state.paymentId, state.addressId, state.methodId, state.error]);

  const pay = async (cvv: string | undefined): Promise<void> => {
    const s = latest.current;
    // The total shown goes with it: a price changed meanwhile is refused rather than charged.
    const request = {
      ...selection(s),
      ...(cvv ? { cvv } : {}),
      ...(s.quote ? { total: s.quote.total } : {}),
    };
    // The same attempt keeps its key (a retry after a lost answer cannot charge twice); a changed one gets a new key.
    const body = JSON.stringify(request);
    if (payKey.current?.body !== body) payKey.current = { body, key: newKey() };
    setCloseAsked(false);
    dispatch({ type: 'submitted' });
    try {
      const result = await api.pay(request, payKey.current.key);
      switch (result.outcome) {
        case 'success': {
          const { outcome: _, ...args } = result;
          // Posted as the server sent it (`shippingMethod` and `shippingInfo` are `{}` when nothing ships).
          messenger.send({ type: 'success', ...args });
          return dispatch({ type: 'finished', outcome: { kind: 'success' } });
        }
        case 'error':
          messenger.send({
            type: 'error',
            orderId: result.orderId,
            errorCode: result.errorCode,
            errorMessage: result.errorMessage,
          });
          return dispatch({
            type: 'finished',
            outcome: {
              kind: 'declined',
              message: result.errorMessage ?? 'The payment could not be completed.',
            },
          });
        case 'payment-selected':
          messenger.send({ type: 'payment-selected', selection: result.selection });
          return dispatch({ type: 'finished', outcome: { kind: 'selected' } });
        case 'pending':
          // The same submit again: the server asks the gateway again once its last ask is over.
          dispatch({ type: 'payment-pending', message: PENDING_NOTICE });
          await new Promise((resolve) => setTimeout(resolve, PENDING_RECHECK_MS));
          return pay(cvv);
        default: {
          const unreachable: never = result;
          throw new Error(`unexpected answer ${JSON.stringify(unreachable)}`);
        }
      }
    } catch (error) {
      if (error instanceof ApiError && error.errorCode === 'TOTAL_CHANGED') return reprice(error);
      if (latest.current.paymentPending) return keepAsking(error, cvv);
      if (error instanceof ApiError && error.status === 0) {
        return dispatch({ type: 'failed', message: PAY_UNANSWERED });
      }
      fail(error);
    }
  };

  /**
   * A submit of a pending payment failed: asked again after the usual wait when the failure passes (a
   * lost connection, a busy server); once the sign-in has ended the page can only say the outcome will
   * reach the shop; any other refusal is shown.
   */
  const keepAsking = async (error: unknown, cvv: string | undefined): Promise<void> => {
    if (!(error instanceof ApiError)) return fail(error);
    if (error.status === 401) return dispatch({ type: 'finished', outcome: { kind: 'pending' } });
    if (error.status !== 0 && error.status !== 429 && error.status < 500) return fail(error);
    await new Promise((resolve) => setTimeout(resolve, PENDING_RECHECK_MS));
    return pay(cvv);
  };

  /** Shows the new total after the shop changed a price, for the shopper to check and pay again. */
  const reprice = async (refusal: ApiError) => {
    try {
      const quote = await api.quote(selection(latest.current));
      const total = formatMoney(quote.total, quote.currency);
      const message = `The total is now ${total}: the shop changed a price since you saw it. Check it and pay again.`;
      dispatch({ type: 'repriced', quote, message });
    } catch {
      fail(refusal);
    }
  };

  const order = state.order;
  const card = selectedCard(state);
  // The security code goes only to a payment the service makes; a merchant paying itself never gets one.
  const asksCvv = order?.authorizationMode !== 'merchant';
  const total = state.quote?.total ?? order?.subtotal;

  return (
    <div class="shell">
      <header class="top">
        <div>
          <h1>{order?.merchantName ?? 'Checkout'}</h1>
          {order && total !== undefined && (
            <p class="muted">
              {state.quote ? 'Total' : 'Subtotal'} {formatMoney(total, order.currency)}
            </p>
          )}
        </div>
        <button type="button" class="icon" aria-label="Close" onClick={close}>
          <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
            <path d="M6 6l12 12M18 6L6 18" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
          </svg>
        </button>
      </header>
      <div class="step" ref={stepRef} aria-busy={state.busy ? 'true' : 'false'}>
        {renderStep()}
      </div>
      {(state.step === 'address' || state.step === 'shipping' || state.returnToSummary) && (
        <nav class="back" aria-label="Checkout steps">
          <button type="button" class="link" onClick={() => dispatch({ type: 'back' })}>
            ← Back
          </button>
        </nav>
      )}
      <footer class="foot">
        <svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
          <path d="M4 7V5a4 4 0 0 1 8 0v2h1v8H3V7zm2 0h4V5a2 2 0 0 0-4 0z" fill="currentColor" />
        </svg>{' '}
        Secured by Wallet Checkout
      </footer>
    </div>
  );

  function renderStep() {
    const { busy, error } = state;
    switch (state.step) {
      case 'loading':
        return (
          <p role="status" class="loading">
            <span class="spinner" aria-hidden="true" /> Loading checkout…
          </p>
        );
      case 'unavailable':
        return (
          <div>
            <StepTitle>Checkout unavailable</StepTitle>
            <Alert message={error} />
          </div>
        );
      case 'email':
        return (
          <EmailStep
            email={state.email || config.email || ''}
            merchantName={order?.merchantName ?? 'the shop'}
            busy={busy}
            error={error}
            notice={state.notice}
            onSubmit={(email) => void requestCode(email)}
          />
        );
      case 'enrol':
        return (
          <EnrolStep
            email={state.email}
            draft={state.enrolment}
            asksCvv={asksCvv}
            busy={busy}
            error={error}
            onSubmit={(draft) => void enrol(draft)}
            onChangeEmail={() => dispatch({ type: 'change-email' })}
          />
        );
      case 'code':
        return (
          state.code && (
            <CodeStep
              code={state.code}
              busy={busy}
              error={error}
              notice={state.notice}
              rememberDeviceDays={
                // Not offered again where the device already remembers the shopper (a code asked to confirm).
                api.canRememberDevice && !api.remembersDevice
                  ? (state.order?.rememberDeviceDays ?? null)
                  : null
              }
              onVerify={(code, rememberDevice) => void verify(code, rememberDevice)}
              onResend={() =>
                state.enrolment
                  ? void enrol(state.enrolment)
                  : void requestCode(state.email, state.notice ?? undefined)
              }
              onChangeEmail={() => dispatch({ type: 'change-email' })}
            />
          )
        );
      case 'card':
        return (
          state.wallet && (
            <CardStep
              wallet={state.wallet}
              selected={state.paymentId}
              asksCvv={asksCvv}
              busy={busy}
              error={error}
              onSelect={(paymentId) => dispatch({ type: 'card-selected', paymentId })}
              onAdd={(card) => void addCard(card)}
              onEdit={(paymentId, changes, billing) =>
                void edit(async () => {
                  const billingAddressId = billing && (await saveBilling(billing));
                  return {
                    type: 'card-edited',
                    ...(await api.editCard(
                      paymentId,
                      billingAddressId ? { ...changes, billingAddressId } : changes,
                    )),
                  };
                })
              }
              onRemove={(paymentIds) => void removeCards(paymentIds)}
              onDeleteWallet={() => void deleteWallet()}
              onSignOut={() => void signOut()}
              onNext={() => dispatch({ type: 'next' })}
            />
          )
        );
      case 'address':
        return (
          <AddressStep
            addresses={state.wallet?.addresses ?? []}
            selected={state.addressId}
            busy={busy}
            error={error}
            onSelect={(addressId) => dispatch({ type: 'address-selected', addressId })}
            onAdd={(input) =>
              change(async () => {
                dispatch({ type: 'address-added', address: await api.addAddress(input) });
                dispatch({ type: 'next' });
              })
            }
            onEdit={(addressId, changes) =>
              void edit(async () => ({
                type: 'address-edited',
                ...(await api.editAddress(addressId, changes)),
              }))
            }
            onRemove={(addressId) => void removeAddress(addressId)}
            onNext={() => dispatch({ type: 'next' })}
          />
        );
      case 'shipping':
        return (
          <ShippingStep
            methods={order?.shippingMethods ?? []}
            selected={state.methodId}
            currency={order?.currency ?? 'USD'}
            busy={busy}
            error={error}
            onSelect={(methodId) => dispatch({ type: 'method-selected', methodId })}
            onNext={() => dispatch({ type: 'next' })}
          />
        );
      case 'summary':
        return (
          order &&
          card && (
            <SummaryStep
              order={order}
              quote={state.quote}
              card={card}
              address={
                order.shippingMethods.length
                  ? (state.wallet?.addresses.find((a) => a.addressId === state.addressId) ?? null)
                  : null
              }
              method={order.shippingMethods.find((m) => m.externalId === state.methodId) ?? null}
              knownCvv={knownCvv(state)}
              busy={busy}
              notice={state.notice ?? (busy ? (closeAsked ? PAYING_CLOSE_NOTICE : PAYING_NOTICE) : null)}
              error={error}
              onChange={(step) => dispatch({ type: 'go', step })}
              onPay={(cvv) => void pay(cvv)}
              onRetryQuote={() => dispatch({ type: 'error-dismissed' })}
            />
          )
        );
      case 'done':
        return (
          state.outcome && (
            <DoneStep outcome={state.outcome} merchantName={order?.merchantName ?? 'The shop'} />
          )
        );
    }
  }
}
