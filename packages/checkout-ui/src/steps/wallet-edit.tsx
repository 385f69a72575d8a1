import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';
import {
  type AddressErrors,
  AddressFields,
  BillingAddressFieldset,
  type BillingChoice,
  BillingSelect,
} from '../address-form.js';
import type { AddressChanges, AddressInput, CardChanges, WalletAddress, WalletCard } from '../api.js';
import { CheckField, Field } from '../ui.js';
import { cardName } from './card-removal.js';

/**
 * "Edit this card" and "Edit this address": the forms that change a saved card or address. A card keeps
 * its number and expiry (typing it again renews those); an address saved with new values takes the old
 * one's place under a new `addressId`, so orders paid with it keep showing it as it was.
 */

/** "Edit this card" / "Edit this address": the selected item's form opens in place of the list. */
export function EditLink(props: { label: string; onEdit: () => void }) {
  return (
    <button type="button" class="link" onClick={props.onEdit}>
      {props.label}
    </button>
  );
}

/** The link that opened the form is gone once it opens: focus goes to the form's first field instead. */
export function useFocusWhenOpened(open: boolean, form: RefObject<HTMLFormElement | null>): void {
  useEffect(() => {
    if (open) form.current?.querySelector<HTMLElement>('fieldset input, fieldset select')?.focus();
  }, [open]);
}

export interface CardDraftEdit {
  nickName: string;
  nameOnCard: string;
  billing: BillingChoice;
  makeDefault: boolean;
}

export const cardEditOf = (card: WalletCard): CardDraftEdit => ({
  nickName: card.nickName ?? '',
  nameOnCard: card.fullNameCard,
  billing: card.billingAddressId,
  makeDefault: false,
});

/**
 * What the form changed, as the API takes it; the name on the card is required. A new billing address
 * is not among them: it is saved first, and its `addressId` joins the changes then.
 */
export function cardChanges(card: WalletCard, draft: CardDraftEdit): CardChanges | { error: string } {
  const nameOnCard = draft.nameOnCard.trim();
  if (!nameOnCard) return { error: 'Enter the name on the card.' };
  const nickName = draft.nickName.trim() || null;
  const { billing } = draft;
  return {
    ...(nickName !== card.nickName ? { nickName } : {}),
    ...(nameOnCard !== card.fullNameCard ? { nameOnCard } : {}),
    ...(billing !== 'new' && billing !== card.billingAddressId ? { billingAddressId: billing } : {}),
    ...(draft.makeDefault && !card.isDefault ? { isDefault: true as const } : {}),
  };
}

export function CardEditFields(props: {
  card: WalletCard;
  addresses: WalletAddress[];
  value: CardDraftEdit;
  onChange: (value: CardDraftEdit) => void;
  error: string | undefined;
  /** The billing address typed in when the shopper chose "A new address". */
  address: AddressInput;
  onAddress: (address: AddressInput) => void;
  addressErrors: AddressErrors;
}) {
  const { card, value, onChange } = props;
  return (
    <>
      <fieldset>
        <legend>Edit {cardName(card)}</legend>
        <div class="grid">
          <Field
            label="Nickname (optional)"
            maxLength={40}
            data-autofocus
            value={value.nickName}
            onValue={(nickName) => onChange({ ...value, nickName })}
            hint="Shown on the card in place of the name on it."
          />
          <Field
            label="Name on card"
            autocomplete="cc-name"
            maxLength={100}
            value={value.nameOnCard}
            onValue={(nameOnCard) => onChange({ ...value, nameOnCard })}
            error={props.error}
          />
          <BillingSelect
            addresses={props.addresses}
            value={value.billing}
            onValue={(billing) => onChange({ ...value, billing })}
          />
        </div>
        {!card.isDefault && (
          <CheckField
            label="Make it my default card"
            checked={value.makeDefault}
            onChecked={(makeDefault) => onChange({ ...value, makeDefault })}
          />
        )}
      </fieldset>
      {value.billing === 'new' && (
        <BillingAddressFieldset
          legend="New billing address"
          value={props.address}
          onChange={props.onAddress}
          errors={props.addressErrors}
        />
      )}
    </>
  );
}

/** The address's own fields, as the form edits them. */
export function addressInputOf(address: WalletAddress): AddressInput {
  const { addressId, externalId, isDefaultBilling, isDefaultShipping, ...input } = address;
  return input;
}

/** The address as typed, and the default it asks to take; the server keeps it as it is when nothing changed. */
export const addressChanges = (address: AddressInput, makeDefault: boolean): AddressChanges => ({
  ...address,
  ...(makeDefault ? { isDefaultShipping: true as const } : {}),
});

export function AddressEditFields(props: {
  address: WalletAddress;
  value: AddressInput;
  onChange: (value: AddressInput) => void;
  errors: AddressErrors;
  makeDefault: boolean;
  onMakeDefault: (makeDefault: boolean) => void;
}) {
  return (
    <fieldset>
      <legend>Edit address</legend>
      <AddressFields value={props.value} onChange={props.onChange} errors={props.errors} section="shipping" />
      {!props.address.isDefaultShipping && (
        <CheckField
          label="Make it my default shipping address"
          checked={props.makeDefault}
          onChecked={props.onMakeDefault}
        />
      )}
    </fieldset>
  );
}
