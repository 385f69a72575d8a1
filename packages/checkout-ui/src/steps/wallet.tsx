import { useState } from 'preact/hooks';
import {
  type AddressErrors,
  AddressFields,
  cleanAddress,
  emptyAddress,
  validateAddress,
} from '../address-form.js';
import type { AddressInput, ShippingMethod, WalletAddress, WalletCard } from '../api.js';
import { formatExpiry } from '../card.js';
import { formatMoney } from '../money.js';
import { Alert, brandName, OptionTile, onSubmitGuard, StepTitle, Submit } from '../ui.js';

/** The card's accessible name: what a screen reader says and what tests select by. */
export const cardLabel = (card: WalletCard): string =>
  `${brandName(card.cardBrand)} ending in ${card.last4CardNumber}, expires ${formatExpiry(card.expMonth, card.expYear)}` +
  (card.isDefault ? ', default' : '') +
  (card.expired ? ', expired' : '');

export function CardStep(props: {
  cards: WalletCard[];
  selected: string | null;
  busy: boolean;
  error: string | null;
  onSelect: (paymentId: string) => void;
  onNext: () => void;
}) {
  return (
    <form onSubmit={onSubmitGuard(props.busy, props.onNext)}>
      <StepTitle>Choose a card</StepTitle>
      {props.cards.length === 0 ? (
        <p class="lead">Your wallet has no cards yet.</p>
      ) : (
        <fieldset>
          <legend class="sr-only">Saved cards</legend>
          {/* A scroll-snapping row of radios: arrow keys move between cards, Tab leaves the group. */}
          <div class="carousel">
            {props.cards.map((card) => (
              <label class={`tile card-tile${card.expired ? ' expired' : ''}`} key={card.paymentId}>
                <input
                  type="radio"
                  name="card"
                  class="sr-only"
                  value={card.paymentId}
                  checked={card.paymentId === props.selected}
                  disabled={card.expired}
                  aria-label={cardLabel(card)}
                  onChange={() => props.onSelect(card.paymentId)}
                  data-autofocus={card.paymentId === props.selected ? true : undefined}
                />
                <span class="tile-body" aria-hidden="true">
                  <span class="tile-top">
                    <span class={`brand brand-${card.cardBrand.toLowerCase()}`}>
                      {brandName(card.cardBrand)}
                    </span>
                    {card.isDefault && <span class="badge">Default</span>}
                    {card.expired && <span class="badge danger">Expired</span>}
                  </span>
                  <span class="pan">•••• {card.last4CardNumber}</span>
                  <span class="tile-bottom">
                    <span>{card.nickName ?? card.fullNameCard}</span>
                    <span>{formatExpiry(card.expMonth, card.expYear)}</span>
                  </span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <Alert message={props.error} />
      <Submit
        busy={props.busy}
        disabled={!props.cards.some((c) => c.paymentId === props.selected && !c.expired)}
      >
        Continue
      </Submit>
    </form>
  );
}

export const addressLine = (a: WalletAddress): string =>
  [a.address1, a.address2, `${a.city}, ${a.state} ${a.zip}`].filter(Boolean).join(', ');

export function AddressStep(props: {
  addresses: WalletAddress[];
  selected: number | null;
  busy: boolean;
  error: string | null;
  onSelect: (addressId: number) => void;
  onAdd: (address: AddressInput) => void;
  onNext: () => void;
}) {
  const [adding, setAdding] = useState(props.addresses.length === 0);
  const [draft, setDraft] = useState<AddressInput>(emptyAddress);
  const [errors, setErrors] = useState<AddressErrors>({});

  const submit = onSubmitGuard(props.busy, () => {
    if (!adding) return props.onNext();
    const found = validateAddress(draft);
    setErrors(found);
    if (Object.keys(found).length) {
      queueMicrotask(() => (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus());
      return;
    }
    props.onAdd(cleanAddress(draft));
  });

  return (
    <form onSubmit={submit} noValidate>
      <StepTitle>Shipping address</StepTitle>
      {!adding && (
        <fieldset>
          <legend class="sr-only">Saved addresses</legend>
          <div class="list">
            {props.addresses.map((a) => (
              <OptionTile
                key={a.addressId}
                name="address"
                value={a.addressId}
                selected={props.selected}
                onSelect={props.onSelect}
              >
                <span>
                  <strong>
                    {a.firstName} {a.lastName}
                  </strong>
                  <span class="muted block">{addressLine(a)}</span>
                </span>
              </OptionTile>
            ))}
          </div>
        </fieldset>
      )}
      {adding ? (
        <fieldset>
          <legend>New address</legend>
          <AddressFields value={draft} onChange={setDraft} errors={errors} section="shipping" />
        </fieldset>
      ) : null}
      {props.addresses.length > 0 && (
        <button type="button" class="link" onClick={() => setAdding(!adding)}>
          {adding ? 'Choose a saved address' : 'Add a new address'}
        </button>
      )}
      <Alert message={props.error} />
      <Submit busy={props.busy}>{adding ? 'Save and continue' : 'Continue'}</Submit>
    </form>
  );
}

export const priceLabel = (price: number, currency: string): string =>
  price === 0 ? 'Free' : formatMoney(price, currency);

export function ShippingStep(props: {
  methods: ShippingMethod[];
  selected: string | null;
  currency: string;
  busy: boolean;
  error: string | null;
  onSelect: (methodId: string) => void;
  onNext: () => void;
}) {
  return (
    <form onSubmit={onSubmitGuard(props.busy, props.onNext)}>
      <StepTitle>Shipping method</StepTitle>
      <fieldset>
        <legend class="sr-only">Shipping methods</legend>
        <div class="list">
          {props.methods.map((m) => (
            <OptionTile
              key={m.externalId}
              name="method"
              value={m.externalId}
              selected={props.selected}
              onSelect={props.onSelect}
            >
              <span class="spread">
                <span>{m.name}</span>
                <strong>{priceLabel(m.price, props.currency)}</strong>
              </span>
            </OptionTile>
          ))}
        </div>
      </fieldset>
      <Alert message={props.error} />
      <Submit busy={props.busy}>Continue</Submit>
    </form>
  );
}
