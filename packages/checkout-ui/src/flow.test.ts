import { describe, expect, it } from 'vitest';
import type { OrderSummary, Wallet, WalletAddress, WalletCard } from './api.js';
import {
  canContinue,
  type EnrolmentDraft,
  type FlowEvent,
  type FlowState,
  initialState,
  knownCvv,
  RESEND_GAP_MS,
  reduce,
} from './flow.js';

const order = (shippingMethods: OrderSummary['shippingMethods'] = []): OrderSummary => ({
  orderId: 'ord_1',
  status: 'CREATED',
  merchantName: 'Demo Store',
  variant: 'standard',
  authorizationMode: 'service',
  currency: 'USD',
  lineItems: [{ SKU: 'A', name: 'Mug', amount: 2000 }],
  subtotal: 2000,
  description: null,
  shippingMethods,
  expiresAt: '2030-01-01T00:00:00.000Z',
  rememberDeviceDays: 30,
});
const METHODS = [
  { externalId: 'std', name: 'Standard', price: 599 },
  { externalId: 'exp', name: 'Express', price: 1599 },
];

const card = (paymentId: string, extra: Partial<WalletCard> = {}): WalletCard => ({
  paymentId,
  cardBrand: 'visa',
  last4CardNumber: paymentId.slice(-4),
  expMonth: 12,
  expYear: 2030,
  isDefault: false,
  needsCvv: false,
  expired: false,
  nickName: null,
  fullNameCard: 'Test Shopper',
  billingAddressId: 1,
  ...extra,
});

const address = (addressId: number, extra: Partial<WalletAddress> = {}): WalletAddress => ({
  addressId,
  externalId: `adr_${addressId}`,
  firstName: 'Test',
  lastName: 'Shopper',
  company: null,
  address1: '1 Main St',
  address2: null,
  city: 'Austin',
  state: 'TX',
  zip: '78701',
  country: 'US',
  phoneNumber: null,
  isDefaultBilling: false,
  isDefaultShipping: false,
  ...extra,
});

const wallet = (cards: WalletCard[], addresses: WalletAddress[] = [address(1)]): Wallet => ({
  email: 'test.shopper@example.com',
  phone: null,
  firstName: 'Test',
  lastName: 'Shopper',
  cards,
  addresses,
});

const DRAFT: EnrolmentDraft = {
  firstName: 'New',
  lastName: 'Shopper',
  phone: '+15125550100',
  card: { number: '4111111111111111', expMonth: 12, expYear: 2030, cvv: '123' },
  billingAddress: {
    company: null,
    address1: '1 Main St',
    address2: null,
    city: 'Austin',
    state: 'TX',
    zip: '78701',
    country: 'US',
  },
};

const run = (events: FlowEvent[], from: FlowState = initialState) => events.reduce(reduce, from);

const signedIn = (shippingMethods = METHODS, cards = [card('c_1111', { isDefault: true })]) =>
  run([
    { type: 'order-loaded', order: order(shippingMethods) },
    { type: 'code-sent', email: 'test.shopper@example.com', destination: 't***r@example.com', now: 0 },
    { type: 'signed-in', wallet: wallet(cards, [address(1), address(2, { isDefaultShipping: true })]) },
  ]);

describe('the checkout flow', () => {
  it('asks a signed-in shopper for a code with the reason, and drops the reason once signed in again', () => {
    const notice = 'To delete your wallet, confirm it is you.';
    let state = run(
      [
        {
          type: 'code-sent',
          email: 'test.shopper@example.com',
          destination: 't***r@example.com',
          now: 0,
          notice,
        },
      ],
      signedIn(),
    );
    expect(state).toMatchObject({ step: 'code', notice, wallet: { email: 'test.shopper@example.com' } });
    state = run([{ type: 'signed-in', wallet: wallet([card('c_1111')]) }], state);
    expect(state).toMatchObject({ step: 'card', notice: null });
    state = run(
      [{ type: 'code-sent', email: 'test.shopper@example.com', destination: 't***r@example.com', now: 1 }],
      state,
    );
    expect(state.notice).toBeNull();
  });

  it('goes email → code → card → address → shipping → summary for a known shopper', () => {
    let state = run([{ type: 'order-loaded', order: order(METHODS) }]);
    expect(state.step).toBe('email');
    state = run([{ type: 'submitted' }], state);
    expect(state.busy).toBe(true);
    state = run(
      [{ type: 'code-sent', email: 'test.shopper@example.com', destination: 't***r@example.com', now: 1000 }],
      state,
    );
    expect(state).toMatchObject({ step: 'code', busy: false, code: { resendAt: 1000 + RESEND_GAP_MS } });
    state = run([{ type: 'signed-in', wallet: wallet([card('c_1111')]) }], state);
    expect(state).toMatchObject({ step: 'card', paymentId: 'c_1111', addressId: 1, methodId: 'std' });
    state = run([{ type: 'next' }], state);
    expect(state.step).toBe('address');
    state = run([{ type: 'next' }], state);
    expect(state.step).toBe('shipping');
    state = run([{ type: 'next' }], state);
    expect(state.step).toBe('summary');
    expect(canContinue(state)).toBe(false); // no quote yet
    state = run(
      [{ type: 'quoted', quote: { currency: 'USD', subtotal: 2000, shipping: 599, taxes: 0, total: 2599 } }],
      state,
    );
    expect(canContinue(state)).toBe(true);
  });

  it('shows the new total when a payment is refused for a price changed since the quote', () => {
    let state = signedIn(METHODS);
    state = run([{ type: 'go', step: 'shipping' }, { type: 'next' }], state);
    const first = { currency: 'USD', subtotal: 2000, shipping: 599, taxes: 0, total: 2599 };
    state = run([{ type: 'quoted', quote: first }, { type: 'submitted' }], state);
    const repriced = { ...first, shipping: 999, total: 2999 };
    state = run([{ type: 'repriced', quote: repriced, message: 'The total is now $29.99' }], state);
    expect(state).toMatchObject({
      step: 'summary',
      busy: false,
      quote: repriced,
      error: 'The total is now $29.99',
    });
    expect(canContinue(state)).toBe(true);
  });

  it('returns to the summary after the one step its Change opened, by Continue or Back', () => {
    let state = signedIn(METHODS);
    state = run([{ type: 'go', step: 'shipping' }, { type: 'next' }], state);
    expect(state).toMatchObject({ step: 'summary', returnToSummary: false });
    state = run([{ type: 'go', step: 'card' }], state);
    expect(state).toMatchObject({ step: 'card', returnToSummary: true });
    state = run([{ type: 'next' }], state);
    expect(state).toMatchObject({ step: 'summary', returnToSummary: false });
    state = run([{ type: 'go', step: 'address' }, { type: 'back' }], state);
    expect(state).toMatchObject({ step: 'summary', returnToSummary: false });
    // Not from the summary (a change made once a code is verified): the steps follow as usual.
    state = run([{ type: 'go', step: 'card' }, { type: 'next' }], signedIn(METHODS));
    expect(state.step).toBe('address');
  });

  it('has no shipping steps when the merchant has no shipping methods', () => {
    let state = signedIn([]);
    expect(state.methodId).toBeNull();
    state = run([{ type: 'next' }], state);
    expect(state.step).toBe('summary');
    expect(run([{ type: 'back' }], state).step).toBe('card');
    expect(run([{ type: 'go', step: 'address' }], state).step).toBe('summary');
  });

  it('selects the default card first and never an expired one', () => {
    const state = signedIn(METHODS, [
      card('c_0001', { expired: true, isDefault: true }),
      card('c_0002'),
      card('c_0003', { isDefault: false }),
    ]);
    expect(state.paymentId).toBe('c_0002');
    const onExpired = run([{ type: 'card-selected', paymentId: 'c_0001' }], state);
    expect(canContinue(onExpired)).toBe(false);
    expect(run([{ type: 'next' }], onExpired).step).toBe('card');
  });

  it('prefers the default shipping address and clears the quote when the selection changes', () => {
    let state = signedIn();
    expect(state.addressId).toBe(2);
    state = run(
      [{ type: 'quoted', quote: { currency: 'USD', subtotal: 1, shipping: 0, taxes: 0, total: 1 } }],
      state,
    );
    expect(run([{ type: 'address-selected', addressId: 1 }], state).quote).toBeNull();
    expect(run([{ type: 'method-selected', methodId: 'exp' }], state).quote).toBeNull();
    expect(run([{ type: 'card-selected', paymentId: 'c_1111' }], state).quote).toBeNull();
  });

  it('adds an address to the wallet and selects it', () => {
    const state = run([{ type: 'address-added', address: address(9) }], signedIn());
    expect(state.addressId).toBe(9);
    expect(state.wallet?.addresses.map((a) => a.addressId)).toEqual([1, 2, 9]);
  });

  it("adds a card's new billing address without making it the shipping choice, unless there was none", () => {
    const chosen = run([{ type: 'address-selected', addressId: 2 }], signedIn());
    const state = run([{ type: 'address-added', address: address(9), billing: true }], chosen);
    expect(state.addressId).toBe(2);
    expect(state.wallet?.addresses.map((a) => a.addressId)).toEqual([1, 2, 9]);
    const first = run([{ type: 'address-added', address: address(9), billing: true }], {
      ...chosen,
      addressId: null,
    });
    expect(first.addressId).toBe(9);
  });

  it('removes an address: the selected one stays selected, else the new default shipping address is', () => {
    let state = run([{ type: 'address-selected', addressId: 1 }], signedIn());
    const cards = state.wallet?.cards ?? [];
    state = run(
      [{ type: 'submitted' }, { type: 'address-removed', wallet: wallet(cards, [address(1)]) }],
      state,
    );
    expect(state).toMatchObject({ busy: false, addressId: 1, quote: null });
    expect(state.wallet?.addresses.map((a) => a.addressId)).toEqual([1]);
    state = run(
      [
        {
          type: 'address-removed',
          wallet: wallet(cards, [address(3), address(4, { isDefaultShipping: true })]),
        },
      ],
      state,
    );
    expect(state.addressId).toBe(4);
    state = run([{ type: 'address-removed', wallet: wallet(cards, []) }], state);
    expect(state.addressId).toBeNull();
  });

  it('takes the wallet an edit answers, selecting the address under its new id and keeping the card', () => {
    const quote = { currency: 'USD', subtotal: 1, shipping: 0, taxes: 0, total: 1 };
    let state = run(
      [
        { type: 'address-selected', addressId: 1 },
        { type: 'quoted', quote },
      ],
      signedIn(),
    );
    const cards = state.wallet?.cards ?? [];
    const edited = address(7, { address1: '7 Fixed St' });
    state = run(
      [
        { type: 'submitted' },
        { type: 'address-edited', address: edited, wallet: wallet(cards, [address(2), edited]) },
      ],
      state,
    );
    expect(state).toMatchObject({ busy: false, addressId: 7, quote: null });
    expect(state.wallet?.addresses.map((a) => a.addressId)).toEqual([2, 7]);

    state = run([{ type: 'quoted', quote }], state);
    const renamed = card('c_1111', { isDefault: true, nickName: 'Travel', billingAddressId: 2 });
    state = run(
      [
        { type: 'submitted' },
        { type: 'card-edited', card: renamed, wallet: wallet([renamed], [address(2), edited]) },
      ],
      state,
    );
    expect(state).toMatchObject({ busy: false, paymentId: 'c_1111', addressId: 7, quote: null });
    expect(state.wallet?.cards).toEqual([renamed]);
  });

  it('signs out to an empty Email step that says so, keeping the order and the shipping method', () => {
    const state = run([{ type: 'method-selected', methodId: 'exp' }, { type: 'signed-out' }], signedIn());
    expect(state).toMatchObject({
      step: 'email',
      email: '',
      wallet: null,
      paymentId: null,
      addressId: null,
      methodId: 'exp',
      busy: false,
      notice: 'You are signed out. Enter your email to check out with your wallet.',
    });
    expect(state.order?.orderId).toBe('ord_1');
  });

  it('counts wrong codes down and locks', () => {
    let state = run([
      { type: 'order-loaded', order: order() },
      { type: 'code-sent', email: 'a@b.example', destination: 'a***@b.example', now: 0 },
      { type: 'code-rejected', reason: 'invalid', triesLeft: 3, message: '3 tries left' },
    ]);
    expect(state).toMatchObject({
      step: 'code',
      error: '3 tries left',
      code: { triesLeft: 3, status: 'open', resent: false, refused: 1 },
    });
    state = run([{ type: 'code-rejected', reason: 'locked', triesLeft: null, message: 'locked' }], state);
    expect(state.code).toMatchObject({ status: 'locked', triesLeft: 0, refused: 2 });
    state = run([{ type: 'code-sent', email: 'a@b.example', destination: 'a***@b.example', now: 5 }], state);
    expect(state.code).toMatchObject({
      status: 'open',
      triesLeft: null,
      resendAt: 5 + RESEND_GAP_MS,
      resent: true,
      refused: 0,
    });
    expect(state.error).toBeNull();
  });

  it('moves the resend time when the server throttles', () => {
    const state = run([
      { type: 'order-loaded', order: order() },
      { type: 'code-sent', email: 'a@b.example', destination: 'x', now: 0 },
      { type: 'code-throttled', retryAt: 99_000, message: 'wait' },
    ]);
    expect(state.code?.resendAt).toBe(99_000);
  });

  it('enrols a new shopper, keeps the CVV for the first payment only, and skips the one-card carousel', () => {
    let state = run([
      { type: 'order-loaded', order: order(METHODS) },
      { type: 'enrol-required', email: 'new@example.com' },
    ]);
    expect(state).toMatchObject({ step: 'enrol', email: 'new@example.com' });
    state = run(
      [
        { type: 'enrolment-filled', draft: DRAFT },
        { type: 'code-sent', email: 'new@example.com', destination: 'n***@example.com', now: 0 },
      ],
      state,
    );
    expect(state.step).toBe('code');
    expect(state.enrolment?.card.number).toBe('4111111111111111');
    // verify created the wallet: its one card is the default.
    state = run([{ type: 'signed-in', wallet: wallet([card('c_new', { isDefault: true })]) }], state);
    expect(state).toMatchObject({
      step: 'address',
      paymentId: 'c_new',
      enrolment: null,
      typedCvv: { paymentId: 'c_new', cvv: '123' },
    });
    expect(knownCvv(state)).toBe('123');
    state = run([{ type: 'finished', outcome: { kind: 'success' } }], state);
    expect(state.typedCvv).toBeNull();
    expect(knownCvv(state)).toBeNull();
  });

  it('offers the enrolment CVV to the enrolled card only', () => {
    let state = run([
      { type: 'order-loaded', order: order(METHODS) },
      { type: 'enrol-required', email: 'new@example.com' },
      { type: 'enrolment-filled', draft: DRAFT },
      { type: 'code-sent', email: 'new@example.com', destination: 'n***@example.com', now: 0 },
      { type: 'signed-in', wallet: wallet([card('c_new', { isDefault: true }), card('c_old')]) },
    ]);
    expect(knownCvv(state)).toBe('123');
    state = run([{ type: 'card-selected', paymentId: 'c_old' }], state);
    expect(knownCvv(state)).toBeNull();
    state = run([{ type: 'card-selected', paymentId: 'c_new' }], state);
    expect(knownCvv(state)).toBe('123');
  });

  it('remembers no CVV for a known shopper', () => {
    const state = signedIn();
    expect(state.typedCvv).toBeNull();
    expect(knownCvv(state)).toBeNull();
  });

  it('remembers no security code for a card added or enrolled where none is taken', () => {
    const added = run([{ type: 'card-added', card: card('c_2222'), cvv: null }], signedIn());
    expect(added.paymentId).toBe('c_2222');
    expect(added.typedCvv).toBeNull();
    const { cvv: _cvv, ...cardWithoutCvv } = DRAFT.card;
    const enrolled = run([
      { type: 'order-loaded', order: order(METHODS) },
      { type: 'enrol-required', email: 'new@example.com' },
      { type: 'enrolment-filled', draft: { ...DRAFT, card: cardWithoutCvv } },
      { type: 'code-sent', email: 'new@example.com', destination: 'n***@example.com', now: 0 },
      { type: 'signed-in', wallet: wallet([card('c_new', { isDefault: true })]) },
    ]);
    expect(enrolled.paymentId).toBe('c_new');
    expect(enrolled.typedCvv).toBeNull();
    expect(knownCvv(enrolled)).toBeNull();
  });

  it('adds a card, selects it, clears the quote and keeps its CVV for that card alone', () => {
    let state = run(
      [{ type: 'quoted', quote: { currency: 'USD', subtotal: 1, shipping: 0, taxes: 0, total: 1 } }],
      signedIn(),
    );
    state = run([{ type: 'submitted' }, { type: 'card-added', card: card('c_2222'), cvv: '456' }], state);
    expect(state).toMatchObject({ step: 'card', busy: false, paymentId: 'c_2222', quote: null });
    expect(state.wallet?.cards.map((c) => [c.paymentId, c.isDefault])).toEqual([
      ['c_1111', true],
      ['c_2222', false],
    ]);
    expect(knownCvv(state)).toBe('456');
    expect(run([{ type: 'next' }], state).step).toBe('address');
    state = run([{ type: 'card-selected', paymentId: 'c_1111' }], state);
    expect(knownCvv(state)).toBeNull();
    state = run([{ type: 'card-selected', paymentId: 'c_2222' }], state);
    expect(knownCvv(state)).toBe('456');
  });

  it('puts a new default card first and takes the mark from the old default', () => {
    const state = run(
      [{ type: 'card-added', card: card('c_2222', { isDefault: true }), cvv: '456' }],
      signedIn(),
    );
    expect(state.wallet?.cards.map((c) => [c.paymentId, c.isDefault])).toEqual([
      ['c_2222', true],
      ['c_1111', false],
    ]);
  });

  it('replaces a renewed card in place and lets a shopper whose cards all expired go on', () => {
    let state = signedIn(METHODS, [
      card('c_0001', { expired: true, isDefault: true, expYear: 2020 }),
      card('c_0002', { expired: true }),
    ]);
    expect(state.paymentId).toBeNull();
    expect(canContinue(state)).toBe(false);
    const renewed = card('c_0002', { expYear: 2031, fullNameCard: 'T Shopper', billingAddressId: 2 });
    state = run([{ type: 'card-added', card: renewed, cvv: '789' }], state);
    expect(state.wallet?.cards.map((c) => c.paymentId)).toEqual(['c_0001', 'c_0002']);
    expect(state.wallet?.cards[1]).toEqual(renewed);
    expect(state.paymentId).toBe('c_0002');
    expect(canContinue(state)).toBe(true);
    expect(run([{ type: 'next' }], state).step).toBe('address');
  });

  it('moves the typed CVV from the enrolled card to an added one', () => {
    let state = run([
      { type: 'order-loaded', order: order() },
      { type: 'enrol-required', email: 'new@example.com' },
      { type: 'enrolment-filled', draft: DRAFT },
      { type: 'code-sent', email: 'new@example.com', destination: 'n***@example.com', now: 0 },
      { type: 'signed-in', wallet: wallet([card('c_new', { isDefault: true })]) },
      { type: 'card-added', card: card('c_2222'), cvv: '4567' },
    ]);
    expect(state.typedCvv).toEqual({ paymentId: 'c_2222', cvv: '4567' });
    state = run([{ type: 'card-selected', paymentId: 'c_new' }], state);
    expect(knownCvv(state)).toBeNull();
  });

  it("removes another card: the server's wallet replaces ours, the selection and its CVV stay", () => {
    let state = run(
      [
        { type: 'card-added', card: card('c_3333'), cvv: '789' },
        { type: 'quoted', quote: { currency: 'USD', subtotal: 1, shipping: 0, taxes: 0, total: 1 } },
        { type: 'submitted' },
      ],
      signedIn(METHODS, [card('c_1111', { isDefault: true }), card('c_2222')]),
    );
    expect(state.busy).toBe(true);
    const after = wallet([card('c_1111', { isDefault: true }), card('c_3333')]);
    state = run([{ type: 'card-removed', wallet: after }], state);
    expect(state).toMatchObject({ step: 'card', busy: false, paymentId: 'c_3333', quote: null });
    expect(state.wallet).toBe(after);
    expect(knownCvv(state)).toBe('789');
  });

  it('removes the selected card: the default that can pay is selected, the CVV typed with it forgotten', () => {
    let state = run(
      [{ type: 'card-added', card: card('c_3333', { isDefault: true }), cvv: '789' }],
      signedIn(METHODS, [card('c_1111', { isDefault: true }), card('c_2222')]),
    );
    expect(state.paymentId).toBe('c_3333');
    state = run(
      [
        {
          type: 'card-removed',
          wallet: wallet([
            card('c_0009', { expired: true }),
            card('c_1111'),
            card('c_2222', { isDefault: true }),
          ]),
        },
      ],
      state,
    );
    expect(state.paymentId).toBe('c_2222');
    expect(state.typedCvv).toBeNull();
    expect(canContinue(state)).toBe(true);
  });

  it('selects nothing and stays on the card step when no card left can pay', () => {
    const state = run(
      [{ type: 'submitted' }, { type: 'card-removed', wallet: wallet([card('c_0002', { expired: true })]) }],
      signedIn(),
    );
    expect(state).toMatchObject({ step: 'card', busy: false, paymentId: null });
    expect(canContinue(state)).toBe(false);
    expect(run([{ type: 'next' }], state).step).toBe('card');
  });

  it('forgets the typed CVV when the session ends', () => {
    const state = run(
      [{ type: 'card-added', card: card('c_2222'), cvv: '456' }, { type: 'session-expired' }],
      signedIn(),
    );
    expect(state.typedCvv).toBeNull();
  });

  it('goes back one step at a time, and from the code to the email', () => {
    let state = run([{ type: 'next' }, { type: 'next' }], signedIn());
    expect(state.step).toBe('shipping');
    state = run([{ type: 'back' }], state);
    expect(state.step).toBe('address');
    const code = run([
      { type: 'order-loaded', order: order() },
      { type: 'code-sent', email: 'a@b.example', destination: 'x', now: 0 },
      { type: 'back' },
    ]);
    expect(code).toMatchObject({ step: 'email', code: null, email: 'a@b.example' });
  });

  it('starts over at the email when the session ends, keeping the order', () => {
    const state = run([{ type: 'session-expired' }], signedIn());
    expect(state).toMatchObject({
      step: 'email',
      wallet: null,
      paymentId: null,
      email: 'test.shopper@example.com',
    });
    expect(state.order?.merchantName).toBe('Demo Store');
    expect(state.error).toMatch(/Sign in again/);
  });

  it('goes back to the email after the wallet was deleted, saying so until the next sign-in starts', () => {
    const state = run([{ type: 'submitted' }, { type: 'wallet-deleted' }], signedIn());
    expect(state).toMatchObject({
      step: 'email',
      wallet: null,
      paymentId: null,
      busy: false,
      error: null,
      email: 'test.shopper@example.com',
      notice: expect.stringMatching(/^Your wallet was deleted\./),
    });
    expect(state.order?.merchantName).toBe('Demo Store');
    const enrolling = run([{ type: 'submitted' }, { type: 'enrol-required', email: state.email }], state);
    expect(enrolling.notice).toBeNull();
  });

  it('ignores navigation while a request is under way', () => {
    const busy = run([{ type: 'next' }, { type: 'submitted' }], signedIn());
    expect(run([{ type: 'back' }], busy).step).toBe('address');
    expect(run([{ type: 'go', step: 'card' }], busy).step).toBe('address');
  });

  it('keeps a payment the gateway has not decided under way, saying so, until its outcome', () => {
    const paying = run(
      [{ type: 'next' }, { type: 'next' }, { type: 'next' }, { type: 'submitted' }],
      signedIn(),
    );
    const pending = run([{ type: 'payment-pending', message: 'not confirmed yet' }], paying);
    expect(pending).toMatchObject({
      step: 'summary',
      busy: true,
      paymentPending: true,
      notice: 'not confirmed yet',
    });
    // Submitted again while pending: the notice stays until the outcome.
    expect(run([{ type: 'submitted' }], pending).notice).toBe('not confirmed yet');
    expect(run([{ type: 'back' }], pending).step).toBe('summary');
    const done = run([{ type: 'finished', outcome: { kind: 'success' } }], pending);
    expect(done).toMatchObject({ step: 'done', busy: false, notice: null });
  });

  it('shows the order as unavailable when it cannot be loaded', () => {
    expect(run([{ type: 'order-failed', message: 'gone' }])).toMatchObject({
      step: 'unavailable',
      error: 'gone',
    });
  });
});
