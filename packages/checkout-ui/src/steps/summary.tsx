import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { addressLine } from '../address-form.js';
import type { OrderSummary, Quote, ShippingMethod, WalletAddress, WalletCard } from '../api.js';
import { isValidCvv } from '../card.js';
import type { Outcome } from '../flow.js';
import { formatMoney } from '../money.js';
import {
  Alert,
  brandName,
  Field,
  focusFirstInvalid,
  LiveNotice,
  onSubmitGuard,
  StepTitle,
  Submit,
} from '../ui.js';
import { priceLabel } from './wallet.js';

/** The last button: "Pay $25.99", or "Continue" when the merchant authorizes the payment itself. */
export function payLabel(order: OrderSummary, quote: Quote | null): string {
  if (order.authorizationMode === 'merchant') return 'Continue';
  return quote ? `Pay ${formatMoney(quote.total, order.currency)}` : 'Pay';
}

type Changeable = 'card' | 'address' | 'shipping';
const CHANGE_LABELS: Record<Changeable, string> = {
  card: 'Change card',
  address: 'Change address',
  shipping: 'Change shipping method',
};

/**
 * One choice on the review: its name, the value and a Change button. The button is a description of its
 * own, as a description list holds only terms and descriptions.
 */
function ReviewRow(props: {
  term: string;
  change: Changeable;
  onChange: (step: Changeable) => void;
  children: ComponentChildren;
}) {
  return (
    <div>
      <dt>{props.term}</dt>
      <dd>{props.children}</dd>
      <dd>
        <button
          type="button"
          class="link"
          onClick={() => props.onChange(props.change)}
          aria-label={CHANGE_LABELS[props.change]}
        >
          Change
        </button>
      </dd>
    </div>
  );
}

export function SummaryStep(props: {
  order: OrderSummary;
  quote: Quote | null;
  card: WalletCard;
  address: WalletAddress | null;
  method: ShippingMethod | null;
  /** The security code typed with this card (at enrolment or "Add a card"): sent as is, not asked again. */
  knownCvv: string | null;
  busy: boolean;
  /** How the payment is going: under way, or not decided yet by the gateway. */
  notice: string | null;
  error: string | null;
  onChange: (step: Changeable) => void;
  onPay: (cvv: string | undefined) => void;
  /** The quote failed: the button asks again. */
  onRetryQuote: () => void;
}) {
  const { order, quote, card } = props;
  const { currency } = order;
  const money = (cents: number) => formatMoney(cents, currency);
  // The merchant's own processor gets a network token with a fresh cryptogram (or the PAN) by webhook, and
  // the service authorizes nothing: a security code would go unused, so none is asked or sent.
  const merchantPays = order.authorizationMode === 'merchant';
  const askCvv = !merchantPays && card.needsCvv && !props.knownCvv;
  const cvvSize = /amex|american/i.test(card.cardBrand) ? 4 : 3;
  const [cvv, setCvv] = useState('');
  const [cvvError, setCvvError] = useState<string | null>(null);

  const quoting = !quote && !props.error;
  const submit = onSubmitGuard(props.busy || quoting, () => {
    if (!quote) return props.onRetryQuote();
    if (askCvv && !isValidCvv(cvv, cvvSize)) {
      setCvvError(`Enter the ${cvvSize}-digit security code on the card.`);
      return focusFirstInvalid();
    }
    setCvvError(null);
    if (merchantPays) return props.onPay(undefined);
    // The CVV typed with a new card goes with its payment (the new card has `needsCvv: false`).
    props.onPay(askCvv ? cvv : (props.knownCvv ?? undefined));
  });

  return (
    <form onSubmit={submit} noValidate>
      <StepTitle>Review and pay</StepTitle>
      <dl class="review">
        <ReviewRow term="Card" change="card" onChange={props.onChange}>
          {brandName(card.cardBrand)} •••• {card.last4CardNumber}
        </ReviewRow>
        {props.address && (
          <ReviewRow term="Ship to" change="address" onChange={props.onChange}>
            {props.address.firstName} {props.address.lastName}, {addressLine(props.address)}
          </ReviewRow>
        )}
        {props.method && (
          <ReviewRow term="Delivery" change="shipping" onChange={props.onChange}>
            {props.method.name} · {priceLabel(props.method.price, currency)}
          </ReviewRow>
        )}
      </dl>

      {order.lineItems.length > 0 && (
        <ul class="items" aria-label="Items">
          {order.lineItems.map((item, i) => (
            <li key={`${item.SKU}-${i}`}>
              <span>{item.name ?? item.SKU}</span>
              {item.amount !== undefined && <span>{money(item.amount)}</span>}
            </li>
          ))}
        </ul>
      )}

      <table class="totals" aria-busy={quote ? 'false' : 'true'}>
        <caption class="sr-only">Order total</caption>
        <tbody>
          <tr>
            <th scope="row">Subtotal</th>
            <td>{money(quote?.subtotal ?? order.subtotal)}</td>
          </tr>
          {order.shippingMethods.length > 0 && (
            <tr>
              <th scope="row">Shipping</th>
              <td>{quote ? money(quote.shipping) : '…'}</td>
            </tr>
          )}
          <tr>
            <th scope="row">Taxes</th>
            <td>{quote ? money(quote.taxes) : '…'}</td>
          </tr>
          <tr class="total">
            <th scope="row">Total</th>
            <td>{quote ? money(quote.total) : '…'}</td>
          </tr>
        </tbody>
      </table>

      {askCvv && (
        <Field
          label="Security code (CVV)"
          autocomplete="cc-csc"
          inputMode="numeric"
          maxLength={cvvSize}
          value={cvv}
          onValue={(value) => setCvv(value.replace(/\D/g, ''))}
          error={cvvError}
          hint={`The ${cvvSize} digits on your card. Used for this payment only, never saved.`}
          data-autofocus
        />
      )}
      {merchantPays && (
        <p class="muted">{order.merchantName} will complete the payment with the card you chose.</p>
      )}
      <LiveNotice message={props.notice} />
      <Alert message={props.error} />
      <Submit busy={props.busy || quoting}>{quote || quoting ? payLabel(order, quote) : 'Try again'}</Submit>
    </form>
  );
}

export function DoneStep({ outcome, merchantName }: { outcome: Outcome; merchantName: string }) {
  const [title, text] =
    outcome.kind === 'success'
      ? ['Payment complete', `Thank you. ${merchantName} has your order.`]
      : outcome.kind === 'selected'
        ? ['Card selected', `${merchantName} will finish your order.`]
        : outcome.kind === 'pending'
          ? [
              'Payment not confirmed yet',
              `Your bank has not confirmed it yet. ${merchantName} will be told the outcome, and you will not be charged twice.`,
            ]
          : ['Payment not completed', outcome.message];
  return (
    <div class={`done ${outcome.kind}`}>
      <StepTitle>{title}</StepTitle>
      <p role="status">{text}</p>
    </div>
  );
}
