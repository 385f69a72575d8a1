import { useEffect, useRef, useState } from 'preact/hooks';
import {
  type AddressErrors,
  AddressFields,
  addressLine,
  BillingAddressFieldset,
  type BillingChoice,
  BillingSelect,
  cleanAddress,
  emptyAddress,
  validateAddress,
} from '../address-form.js';
import type {
  AddressChanges,
  AddressInput,
  CardChanges,
  NewCardInput,
  ShippingMethod,
  Wallet,
  WalletAddress,
  WalletCard,
} from '../api.js';
import { formatExpiry } from '../card.js';
import {
  type CardDraft,
  type CardErrors,
  CardFields,
  cleanCard,
  emptyCard,
  validateCard,
} from '../card-form.js';
import { selectableCards } from '../flow.js';
import { formatMoney } from '../money.js';
import {
  Alert,
  brandName,
  Field,
  focusFirstInvalid,
  OptionTile,
  onSubmitGuard,
  StepTitle,
  Submit,
} from '../ui.js';
import { CardRemoval, cardName } from './card-removal.js';
import { type Removal, RemovalControls, type RemovalProps } from './removal.js';
import {
  AddressEditFields,
  addressChanges,
  addressInputOf,
  type CardDraftEdit,
  CardEditFields,
  cardChanges,
  cardEditOf,
  EditLink,
  useFocusWhenOpened,
} from './wallet-edit.js';

/** The card's accessible name: what a screen reader says and what tests select by. */
export const cardLabel = (card: WalletCard): string =>
  `${cardName(card)}${card.nickName ? `, ${card.nickName}` : ''}, expires ${formatExpiry(card.expMonth, card.expYear)}` +
  (card.isDefault ? ', default' : '') +
  (card.expired ? ', expired' : '');

/** "Add a card": the card, its billing address, and the security code for the payment that follows. */
export interface NewCard {
  card: Omit<NewCardInput, 'billingAddressId'>;
  /** A saved address's `addressId`, or an address to save first (a new one, or the wallet has none). */
  billing: number | AddressInput;
  /** Not sent with the card: it goes with the payment. Null where none is asked. */
  cvv: string | null;
}

type NewCardErrors = CardErrors & { nameOnCard?: string; address?: AddressErrors };

const defaultBilling = (addresses: WalletAddress[]): number | null =>
  (addresses.find((a) => a.isDefaultBilling) ?? addresses[0])?.addressId ?? null;

/** "Add a card" / "Choose a saved card": opens the step's form, or closes it for the saved ones. */
function FormToggle(props: { adding: boolean; add: string; choose: string; onToggle: () => void }) {
  return (
    <button type="button" class="link" onClick={props.onToggle}>
      {props.adding ? props.choose : props.add}
    </button>
  );
}

export function CardStep(props: {
  wallet: Wallet;
  selected: string | null;
  busy: boolean;
  error: string | null;
  /** False where the merchant authorizes payments itself: no security code is taken. */
  asksCvv: boolean;
  onSelect: (paymentId: string) => void;
  onAdd: (card: NewCard) => void;
  /**
   * "Edit this card", saved: the app saves `billing` first when given (a new billing address), then
   * answers with a new `wallet` and goes on, or with an `error`.
   */
  onEdit: (paymentId: string, changes: CardChanges, billing?: AddressInput) => void;
  /** "Remove": the app answers with a new `wallet` (the cards gone) or an `error`. */
  onRemove: (paymentIds: string[]) => void;
  /** "Delete wallet": the app answers by leaving the step for the Email step, or with an `error`. */
  onDeleteWallet: () => void;
  /** "Not you? Sign out": the app leaves the step for an empty Email step. */
  onSignOut: () => void;
  onNext: () => void;
}) {
  const { cards, addresses } = props.wallet;
  const canPay = selectableCards(props.wallet).length > 0;
  // Nothing to choose from: the form is the only way on.
  const [adding, setAdding] = useState(!canPay);
  const [draft, setDraft] = useState<CardDraft>(emptyCard);
  const [nameOnCard, setNameOnCard] = useState(`${props.wallet.firstName} ${props.wallet.lastName}`.trim());
  const [chosenBilling, setChosenBilling] = useState<BillingChoice | null>(null);
  // A new billing address (and the first, in a wallet without addresses) is typed here, in the shopper's name.
  const [address, setAddress] = useState<AddressInput>(() => ({
    ...emptyAddress(),
    firstName: props.wallet.firstName,
    lastName: props.wallet.lastName,
    phoneNumber: props.wallet.phone,
  }));
  const [errors, setErrors] = useState<NewCardErrors>({});
  const [asking, setAsking] = useState<Removal<WalletCard> | null>(null);
  const [askingDelete, setAskingDelete] = useState<Removal<Wallet> | null>(null);
  // "Edit this card": the selected card's form, in place of the carousel.
  const [editing, setEditing] = useState<CardDraftEdit | null>(null);
  const [editError, setEditError] = useState<string | undefined>(undefined);
  const formRef = useRef<HTMLFormElement>(null);
  const selectedCard = cards.find((c) => c.paymentId === props.selected && !c.expired) ?? null;
  const editedCard = editing && selectedCard;
  useFocusWhenOpened(editing !== null, formRef);
  const removing = props.busy && (asking !== null || askingDelete !== null);
  const firstControl = () => formRef.current?.querySelector<HTMLElement>('[data-autofocus]:not([disabled])');
  // Derived, not stored: an address saved by a refused "Add a card" is offered when the shopper tries again.
  const billing = chosenBilling ?? defaultBilling(addresses);
  const typesAddress = adding ? billing === null || billing === 'new' : editing?.billing === 'new';
  // A new address saved before a card that was then refused is chosen for the next try, not saved again.
  const knownAddresses = useRef(addresses.map((a) => a.addressId));
  useEffect(() => {
    const saved = addresses.find((a) => !knownAddresses.current.includes(a.addressId));
    knownAddresses.current = addresses.map((a) => a.addressId);
    if (!saved) return;
    if (chosenBilling === 'new') setChosenBilling(saved.addressId);
    if (editing?.billing === 'new') setEditing({ ...editing, billing: saved.addressId });
  }, [addresses]);
  const lead =
    cards.length === 0 ? 'Your wallet has no cards yet.' : canPay ? null : 'Your saved cards have expired.';

  // No card left that can pay, or none at all (removed): the form is the only way on.
  const noCards = cards.length === 0;
  useEffect(() => {
    if (!canPay) setAdding(true);
  }, [canPay, noCards]);

  const submit = onSubmitGuard(props.busy, () => {
    const addressErrors = typesAddress ? validateAddress(address, false) : {};
    const typed = Object.keys(addressErrors).length ? { address: addressErrors } : {};
    if (editing && editedCard) {
      const changes = cardChanges(editedCard, editing);
      setEditError('error' in changes ? changes.error : undefined);
      setErrors(typed);
      if ('error' in changes || typed.address) return focusFirstInvalid();
      if (typesAddress) return props.onEdit(editedCard.paymentId, changes, cleanAddress(address));
      return Object.keys(changes).length ? props.onEdit(editedCard.paymentId, changes) : props.onNext();
    }
    if (!adding) return props.onNext();
    const found: NewCardErrors = { ...validateCard(draft, new Date(), props.asksCvv), ...typed };
    if (!nameOnCard.trim()) found.nameOnCard = 'Enter the name on the card.';
    setErrors(found);
    if (Object.keys(found).length) return focusFirstInvalid();
    props.onAdd({
      card: { ...cleanCard(draft), nameOnCard: nameOnCard.trim() },
      billing: typeof billing === 'number' ? billing : cleanAddress(address),
      cvv: props.asksCvv ? draft.cvv : null,
    });
  });

  return (
    <form onSubmit={submit} noValidate ref={formRef}>
      <StepTitle>Choose a card</StepTitle>
      <p class="signed-in muted">
        Signed in as <strong>{props.wallet.email}</strong>.{' '}
        <button
          type="button"
          class="link inline"
          aria-disabled={props.busy ? 'true' : undefined}
          onClick={() => !props.busy && props.onSignOut()}
        >
          Not you? Sign out
        </button>
      </p>
      {lead && <p class="lead">{lead}</p>}
      {editing && editedCard && (
        <CardEditFields
          card={editedCard}
          addresses={addresses}
          value={editing}
          onChange={setEditing}
          error={editError}
          address={address}
          onAddress={setAddress}
          addressErrors={errors.address ?? {}}
        />
      )}
      {!adding && !editing && cards.length > 0 && (
        <fieldset>
          <legend class="sr-only">Saved cards</legend>
          {/* A scroll-snapping row of radios: arrow keys move between cards, Tab leaves the group. */}
          <div class="carousel">
            {cards.map((card) => (
              <label class={`tile card-tile${card.expired ? ' expired' : ''}`} key={card.paymentId}>
                <input
                  type="radio"
                  name="card"
                  class="sr-only"
                  value={card.paymentId}
                  checked={card.paymentId === props.selected}
                  disabled={card.expired}
                  aria-label={cardLabel(card)}
                  onChange={(event) => {
                    setAsking(null);
                    props.onSelect(card.paymentId);
                    // Arrow keys select a card the row may hide: scrolled to, as a click's already shows.
                    event.currentTarget
                      .closest('label')
                      ?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
                  }}
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
      {adding && (
        <fieldset>
          <legend>New card</legend>
          <div class="grid">
            <CardFields value={draft} onChange={setDraft} errors={errors} withCvv={props.asksCvv} autofocus />
            <Field
              label="Name on card"
              autocomplete="cc-name"
              maxLength={100}
              value={nameOnCard}
              onValue={setNameOnCard}
              error={errors.nameOnCard}
            />
            {billing !== null && (
              <BillingSelect addresses={addresses} value={billing} onValue={setChosenBilling} />
            )}
          </div>
        </fieldset>
      )}
      {adding && typesAddress && (
        <BillingAddressFieldset
          legend={billing === 'new' ? 'New billing address' : 'Billing address'}
          value={address}
          onChange={setAddress}
          errors={errors.address ?? {}}
        />
      )}
      <div class="actions">
        {cards.length > 0 && (
          <FormToggle
            adding={adding || editing !== null}
            add="Add a card"
            choose="Choose a saved card"
            onToggle={() => {
              setAsking(null);
              if (editing) setEditing(null);
              else setAdding(!adding);
            }}
          />
        )}
        {!adding && !editing && selectedCard && asking === null && askingDelete === null && (
          <EditLink
            label="Edit this card"
            onEdit={() => {
              setEditError(undefined);
              setEditing(cardEditOf(selectedCard));
            }}
          />
        )}
        <CardRemoval
          items={cards}
          selected={selectedCard}
          links={!adding && !editing && askingDelete === null}
          asking={asking}
          onAsk={setAsking}
          busy={props.busy}
          onRemove={props.onRemove}
          firstControl={firstControl}
        />
      </div>
      <Alert message={props.error} />
      <Submit busy={props.busy && !removing} disabled={removing || (!adding && !selectedCard)}>
        {adding || editing ? 'Save and continue' : 'Continue'}
      </Submit>
      <div class="actions wallet-deletion">
        <WalletDeletion
          items={[props.wallet]}
          links={!adding && !editing && asking === null}
          asking={askingDelete}
          onAsk={setAskingDelete}
          busy={props.busy}
          onRemove={props.onDeleteWallet}
          firstControl={firstControl}
        />
      </div>
    </form>
  );
}

function walletDeletion(wallets: Wallet[], from: string): Removal<Wallet> {
  return {
    items: wallets,
    from,
    question:
      'Delete your wallet? Its cards and addresses are removed for good, and you are signed out. Orders you paid stay with the shops.',
    done: 'Your wallet was deleted.',
  };
}

/** "Delete my wallet": the shopper's own erasure, asked in place like a removal. */
function WalletDeletion(props: RemovalProps<Wallet>) {
  return (
    <RemovalControls
      {...props}
      idOf={(wallet) => wallet.email}
      offers={[{ key: 'wallet', label: 'Delete my wallet', items: props.items }]}
      describe={walletDeletion}
      noun={{ one: 'wallet', many: 'wallets' }}
      verb="Delete"
    />
  );
}

function addressRemoval(addresses: WalletAddress[], from: string): Removal<WalletAddress> {
  const name = addresses.map(addressLine).join('; ');
  return {
    items: addresses,
    from,
    question: `Remove ${name} from your wallet?`,
    done: `${name} was removed from your wallet.`,
  };
}

/** "Remove this address": the selected one. */
function AddressRemoval(props: RemovalProps<WalletAddress> & { selected: WalletAddress | null }) {
  const { selected, ...controls } = props;
  return (
    <RemovalControls
      {...controls}
      idOf={(address) => String(address.addressId)}
      offers={[{ key: 'selected', label: 'Remove this address', items: selected ? [selected] : [] }]}
      describe={addressRemoval}
      noun={{ one: 'address', many: 'addresses' }}
    />
  );
}

export function AddressStep(props: {
  addresses: WalletAddress[];
  selected: number | null;
  busy: boolean;
  error: string | null;
  onSelect: (addressId: number) => void;
  onAdd: (address: AddressInput) => void;
  /** "Edit this address", saved: the app answers with new `addresses` and goes on, or with an `error`. */
  onEdit: (addressId: number, changes: AddressChanges) => void;
  /** "Remove": the app answers with new `addresses` (the address gone) or an `error`. */
  onRemove: (addressId: number) => void;
  onNext: () => void;
}) {
  const [adding, setAdding] = useState(props.addresses.length === 0);
  const [draft, setDraft] = useState<AddressInput>(emptyAddress);
  const [errors, setErrors] = useState<AddressErrors>({});
  const [asking, setAsking] = useState<Removal<WalletAddress> | null>(null);
  // "Edit this address": the selected address's form, in place of the list.
  const [editing, setEditing] = useState<AddressInput | null>(null);
  const [makeDefault, setMakeDefault] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const removing = props.busy && asking !== null;
  const selectedAddress = props.addresses.find((a) => a.addressId === props.selected) ?? null;
  const editedAddress = editing && selectedAddress;
  useFocusWhenOpened(editing !== null, formRef);

  // The last address removed: the form is the only way on.
  const none = props.addresses.length === 0;
  useEffect(() => {
    if (none) setAdding(true);
  }, [none]);

  const submit = onSubmitGuard(props.busy, () => {
    if (editing && editedAddress) {
      const found = validateAddress(editing);
      setErrors(found);
      if (Object.keys(found).length) return focusFirstInvalid();
      return props.onEdit(editedAddress.addressId, addressChanges(cleanAddress(editing), makeDefault));
    }
    if (!adding) return props.onNext();
    const found = validateAddress(draft);
    setErrors(found);
    if (Object.keys(found).length) return focusFirstInvalid();
    props.onAdd(cleanAddress(draft));
  });

  return (
    <form onSubmit={submit} noValidate ref={formRef}>
      <StepTitle>Shipping address</StepTitle>
      {editing && editedAddress && (
        <AddressEditFields
          address={editedAddress}
          value={editing}
          onChange={setEditing}
          errors={errors}
          makeDefault={makeDefault}
          onMakeDefault={setMakeDefault}
        />
      )}
      {!adding && !editing && (
        <fieldset>
          <legend class="sr-only">Saved addresses</legend>
          <div class="list">
            {props.addresses.map((a) => (
              <OptionTile
                key={a.addressId}
                name="address"
                value={a.addressId}
                selected={props.selected}
                onSelect={(addressId) => {
                  setAsking(null);
                  props.onSelect(addressId);
                }}
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
      <div class="actions">
        {props.addresses.length > 0 && (
          <FormToggle
            adding={adding || editing !== null}
            add="Add a new address"
            choose="Choose a saved address"
            onToggle={() => {
              setAsking(null);
              setErrors({});
              if (editing) setEditing(null);
              else setAdding(!adding);
            }}
          />
        )}
        {!adding && !editing && selectedAddress && asking === null && (
          <EditLink
            label="Edit this address"
            onEdit={() => {
              setErrors({});
              setMakeDefault(false);
              setEditing(addressInputOf(selectedAddress));
            }}
          />
        )}
        <AddressRemoval
          items={props.addresses}
          selected={selectedAddress}
          links={!adding && !editing}
          asking={asking}
          onAsk={setAsking}
          busy={props.busy}
          onRemove={([addressId]) => props.onRemove(Number(addressId))}
          firstControl={() =>
            formRef.current?.querySelector<HTMLElement>('[data-autofocus]') ??
            formRef.current?.querySelector<HTMLElement>('input')
          }
        />
      </div>
      <Alert message={props.error} />
      <Submit busy={props.busy && !removing} disabled={removing}>
        {adding || editing ? 'Save and continue' : 'Continue'}
      </Submit>
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
