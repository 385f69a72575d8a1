import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';
import { type AddressErrors, AddressFields } from '../address-form.js';
import type { AddressChanges, AddressInput, CardChanges, WalletAddress, WalletCard } from '../api.js';
import { CheckField, Field, SelectField } from '../ui.js';
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
  billingAddressId: number;
  makeDefault: boolean;
}

export const cardEditOf = (card: WalletCard): CardDraftEdit => ({
  nickName: card.nickName ?? '',
  nameOnCard: card.fullNameCard,
  billingAddressId: card.billingAddressId,
  makeDefault: false,
});

/** What the form changed, as the API takes it; the name on the card is required. */
export function cardChanges(card: WalletCard, draft: CardDraftEdit): CardChanges | { error: string } {
  const nameOnCard = draft.nameOnCard.trim();
  if (!nameOnCard) return { error: 'Enter the name on the card.' };
  const nickName = draft.nickName.trim() || null;
  return {
    ...(nickName !== card.nickName ? { nickName } : {}),
    ...(nameOnCard !== card.fullNameCard ? { nameOnCard } : {}),
    ...(draft.billingAddressId !== card.billingAddressId ? { billingAddressId: draft.billingAddressId } : {}),
    ...(draft.makeDefault && !card.isDefault ? { isDefault: true as const } : {}),
  };
}

export function CardEditFields(props: {
  card: WalletCard;
  addresses: WalletAddress[];
  value: CardDraftEdit;
  onChange: (value: CardDraftEdit) => void;
  error: string | undefined;
  addressLine: (address: WalletAddress) => string;
}) {
  const { card, value, onChange } = props;
  // A billing address removed elsewhere is still the card's until another is chosen.
  const listed = props.addresses.some((a) => a.addressId === value.billingAddressId);
  return (
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
        {(listed || props.addresses.length > 0) && (
          <SelectField
            label="Billing address"
            value={String(value.billingAddressId)}
            onValue={(id) => onChange({ ...value, billingAddressId: Number(id) })}
            options={[
              ...(listed ? [] : [{ value: String(value.billingAddressId), label: 'The address it has now' }]),
              ...props.addresses.map((a) => ({
                value: String(a.addressId),
                label: `${a.firstName} ${a.lastName}, ${props.addressLine(a)}`,
              })),
            ]}
          />
        )}
      </div>
      {!card.isDefault && (
        <CheckField
          label="Make it my default card"
          checked={value.makeDefault}
          onChecked={(makeDefault) => onChange({ ...value, makeDefault })}
        />
      )}
    </fieldset>
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
