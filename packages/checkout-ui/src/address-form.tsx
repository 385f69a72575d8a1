import type { AddressInput } from './api.js';
import { Field } from './ui.js';

/** Address entry shared by "Add a new address" and the enrolment's billing address. */

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

export function AddressFields({
  value,
  onChange,
  errors,
  withNames = true,
  section,
}: {
  value: AddressInput;
  onChange: (value: AddressInput) => void;
  errors: AddressErrors;
  withNames?: boolean;
  /** The autocomplete section (`shipping`, `billing`). */
  section: 'shipping' | 'billing';
}) {
  const set = (key: keyof AddressInput) => (next: string) => onChange({ ...value, [key]: next });
  const auto = (token: string) => `${section} ${token}`;
  return (
    <div class="grid">
      {withNames && (
        <>
          <Field
            label="First name"
            autocomplete={auto('given-name')}
            value={value.firstName}
            onValue={set('firstName')}
            error={errors.firstName}
            class="half"
          />
          <Field
            label="Last name"
            autocomplete={auto('family-name')}
            value={value.lastName}
            onValue={set('lastName')}
            error={errors.lastName}
            class="half"
          />
        </>
      )}
      <Field
        label="Street address"
        autocomplete={auto('address-line1')}
        value={value.address1}
        onValue={set('address1')}
        error={errors.address1}
      />
      <Field
        label="Apartment, suite (optional)"
        autocomplete={auto('address-line2')}
        value={value.address2 ?? ''}
        onValue={set('address2')}
      />
      <Field
        label="City"
        autocomplete={auto('address-level2')}
        value={value.city}
        onValue={set('city')}
        error={errors.city}
      />
      <Field
        label="State"
        autocomplete={auto('address-level1')}
        value={value.state}
        onValue={set('state')}
        error={errors.state}
        maxLength={2}
        class="third"
      />
      <Field
        label="ZIP code"
        autocomplete={auto('postal-code')}
        inputMode="numeric"
        value={value.zip}
        onValue={set('zip')}
        error={errors.zip}
        maxLength={10}
        class="third"
      />
      <Field
        label="Country"
        autocomplete={auto('country')}
        value={value.country}
        onValue={set('country')}
        error={errors.country}
        maxLength={2}
        class="third"
      />
    </div>
  );
}
