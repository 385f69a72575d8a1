import type { ComponentChildren } from 'preact';
import type { AddressInput, WalletAddress } from './api.js';
import { Field, type FieldProps, SelectField } from './ui.js';

/** Address entry shared by "Add a new address", the enrolment's billing address and "Add a card". */

export type AddressErrors = Partial<Record<keyof AddressInput, string>>;

export const emptyAddress = (): AddressInput => ({
  firstName: '',
  lastName: '',
  company: null,
  address1: '',
  address2: null,
  city: '',
  state: '',
  zip: '',
  country: 'US',
  phoneNumber: null,
});

export function validateAddress(address: AddressInput, withNames = true): AddressErrors {
  const errors: AddressErrors = {};
  if (withNames && !address.firstName.trim()) errors.firstName = 'Enter a first name.';
  if (withNames && !address.lastName.trim()) errors.lastName = 'Enter a last name.';
  if (!address.address1.trim()) errors.address1 = 'Enter a street address.';
  if (!address.city.trim()) errors.city = 'Enter a city.';
  if (!/^[A-Za-z]{2}$/.test(address.state.trim())) errors.state = 'Enter the two-letter state code, like TX.';
  if (address.country.trim().toUpperCase() === 'US' && !/^\d{5}(-\d{4})?$/.test(address.zip.trim()))
    errors.zip = 'Enter a 5-digit ZIP code.';
  else if (!address.zip.trim()) errors.zip = 'Enter a postal code.';
  if (!/^[A-Za-z]{2}$/.test(address.country.trim()))
    errors.country = 'Enter the two-letter country code, like US.';
  return errors;
}

/** Trimmed, upper-cased codes, empty optionals as null: what the API receives. */
export function cleanAddress(address: AddressInput): AddressInput {
  const optional = (value: string | null) => (value?.trim() ? value.trim() : null);
  return {
    firstName: address.firstName.trim(),
    lastName: address.lastName.trim(),
    company: optional(address.company),
    address1: address.address1.trim(),
    address2: optional(address.address2),
    city: address.city.trim(),
    state: address.state.trim().toUpperCase(),
    zip: address.zip.trim(),
    country: address.country.trim().toUpperCase(),
    phoneNumber: optional(address.phoneNumber),
  };
}

interface AddressForm {
  value: AddressInput;
  onChange: (value: AddressInput) => void;
  errors: AddressErrors;
  /** The autocomplete section (`shipping`, `billing`). */
  section: 'shipping' | 'billing';
}

type AddressFieldSpec = Omit<FieldProps, 'value' | 'onValue' | 'error'> & {
  name: keyof AddressInput;
  /** The autocomplete token within the form's section, such as `postal-code`. */
  autocomplete: string;
};

const NAME_FIELDS: AddressFieldSpec[] = [
  { name: 'firstName', label: 'First name', autocomplete: 'given-name', class: 'half' },
  { name: 'lastName', label: 'Last name', autocomplete: 'family-name', class: 'half' },
];

const PLACE_FIELDS: AddressFieldSpec[] = [
  { name: 'address1', label: 'Street address', autocomplete: 'address-line1' },
  { name: 'address2', label: 'Apartment, suite (optional)', autocomplete: 'address-line2' },
  { name: 'city', label: 'City', autocomplete: 'address-level2' },
  { name: 'state', label: 'State', autocomplete: 'address-level1', maxLength: 2, class: 'third' },
  {
    name: 'zip',
    label: 'ZIP code',
    autocomplete: 'postal-code',
    inputMode: 'numeric',
    maxLength: 10,
    class: 'third',
  },
  { name: 'country', label: 'Country', autocomplete: 'country', maxLength: 2, class: 'third' },
];

/** One input of the address, bound to its field by `name`. */
function AddressField({ form, name, autocomplete, ...field }: AddressFieldSpec & { form: AddressForm }) {
  return (
    <Field
      {...field}
      autocomplete={`${form.section} ${autocomplete}`}
      value={form.value[name] ?? ''}
      onValue={(next) => form.onChange({ ...form.value, [name]: next })}
      error={form.errors[name]}
    />
  );
}

export function AddressFields({ withNames = true, ...form }: AddressForm & { withNames?: boolean }) {
  const fields = withNames ? [...NAME_FIELDS, ...PLACE_FIELDS] : PLACE_FIELDS;
  return (
    <div class="grid">
      {fields.map((spec) => (
        <AddressField key={spec.name} form={form} {...spec} />
      ))}
    </div>
  );
}

/**
 * A card's billing address typed in: the address without names (they are the shopper's), and whatever
 * the form adds after it (the enrolment's phone).
 */
export function BillingAddressFieldset(
  props: Omit<AddressForm, 'section'> & { legend?: string; children?: ComponentChildren },
) {
  const { children, legend = 'Billing address', ...form } = props;
  return (
    <fieldset>
      <legend>{legend}</legend>
      <AddressFields {...form} withNames={false} section="billing" />
      {children}
    </fieldset>
  );
}

export const addressLine = (a: WalletAddress): string =>
  [a.address1, a.address2, `${a.city}, ${a.state} ${a.zip}`].filter(Boolean).join(', ');

/** A card's billing address: one of the wallet's, or a new one, typed in and saved before the card. */
export type BillingChoice = number | 'new';

/**
 * The billing address list of "Add a card" and "Edit this card", with "A new address" last. A card's
 * address removed from the wallet is still the card's until another is chosen: it shows as the one it has.
 */
export function BillingSelect(props: {
  addresses: WalletAddress[];
  value: BillingChoice;
  onValue: (choice: BillingChoice) => void;
}) {
  const { addresses, value } = props;
  const unlisted = value !== 'new' && !addresses.some((a) => a.addressId === value);
  return (
    <SelectField
      label="Billing address"
      value={String(value)}
      onValue={(choice) => props.onValue(choice === 'new' ? 'new' : Number(choice))}
      options={[
        ...(unlisted ? [{ value: String(value), label: 'The address it has now' }] : []),
        ...addresses.map((a) => ({
          value: String(a.addressId),
          label: `${a.firstName} ${a.lastName}, ${addressLine(a)}`,
        })),
        { value: 'new', label: 'A new address' },
      ]}
    />
  );
}
