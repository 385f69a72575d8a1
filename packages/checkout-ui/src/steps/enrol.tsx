import { useState } from 'preact/hooks';
import {
  type AddressErrors,
  AddressFields,
  cleanAddress,
  emptyAddress,
  validateAddress,
} from '../address-form.js';
import type { AddressInput } from '../api.js';
import {
  checkCardNumber,
  digitsOnly,
  formatCardNumber,
  isValidCvv,
  maskExpiryInput,
  parseExpiry,
} from '../card.js';
import type { EnrolmentDraft } from '../flow.js';
import { Alert, Field, onSubmitGuard, StepTitle, Submit } from '../ui.js';

interface Form {
  firstName: string;
  lastName: string;
  cardNumber: string;
  expiry: string;
  cvv: string;
  phone: string;
}

type Errors = Partial<Record<keyof Form, string>> & { address?: AddressErrors };

export function validateEnrolment(form: Form, now = new Date()): Errors {
  const errors: Errors = {};
  const card = checkCardNumber(form.cardNumber);
  if (!form.firstName.trim()) errors.firstName = 'Enter your first name.';
  if (!form.lastName.trim()) errors.lastName = 'Enter your last name.';
  if (!card.valid) errors.cardNumber = 'Enter a valid card number.';
  if (!parseExpiry(form.expiry, now)) errors.expiry = 'Enter a future expiry date as MM/YY.';
  if (!isValidCvv(form.cvv, card.cvvSize)) errors.cvv = `Enter the ${card.cvvSize}-digit security code.`;
  if (digitsOnly(form.phone).length < 10) errors.phone = 'Enter a phone number with its area code.';
  return errors;
}

export function EnrolStep(props: {
  email: string;
  draft: EnrolmentDraft | null;
  busy: boolean;
  error: string | null;
  onSubmit: (draft: EnrolmentDraft) => void;
  onChangeEmail: () => void;
}) {
  const d = props.draft;
  const [form, setForm] = useState<Form>({
    firstName: d?.firstName ?? '',
    lastName: d?.lastName ?? '',
    cardNumber: d ? formatCardNumber(d.card.number) : '',
    expiry: d ? `${String(d.card.expMonth).padStart(2, '0')}/${String(d.card.expYear).slice(-2)}` : '',
    cvv: '',
    phone: d?.phone ?? '',
  });
  const [address, setAddress] = useState<AddressInput>(
    d ? { ...emptyAddress(), ...d.billingAddress } : emptyAddress(),
  );
  const [errors, setErrors] = useState<Errors>({});
  const card = checkCardNumber(form.cardNumber);
  const set = (key: keyof Form) => (value: string) => setForm({ ...form, [key]: value });

  const submit = onSubmitGuard(props.busy, () => {
    const found: Errors = validateEnrolment(form);
    const addressErrors = validateAddress(address, false);
    if (Object.keys(addressErrors).length) found.address = addressErrors;
    setErrors(found);
    if (Object.keys(found).length) {
      // Focus the first field that needs attention.
      queueMicrotask(() => (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus());
      return;
    }
    const expiry = parseExpiry(form.expiry) as { month: number; year: number };
    // The server's EnrolBody is strict: the billing address carries no name or phone (they are the shopper's).
    const { firstName: _f, lastName: _l, phoneNumber: _p, ...billingAddress } = cleanAddress(address);
    const phone = form.phone.trim();
    props.onSubmit({
      firstName: form.firstName.trim(),
      lastName: form.lastName.trim(),
      // Digits, keeping a leading "+": what the server's phone pattern takes.
      phone: `${phone.startsWith('+') ? '+' : ''}${digitsOnly(phone)}`,
      card: {
        number: digitsOnly(form.cardNumber),
        expMonth: expiry.month,
        expYear: expiry.year,
        cvv: form.cvv,
      },
      billingAddress,
    });
  });

  return (
    <form onSubmit={submit} noValidate>
      <StepTitle>Create your wallet</StepTitle>
      <p class="lead">
        Save a card for <strong>{props.email}</strong> to pay here and at other shops.{' '}
        <button type="button" class="link inline" onClick={props.onChangeEmail}>
          Use another email
        </button>
      </p>
      <fieldset>
        <legend>Card</legend>
        <div class="grid">
          <Field
            label="First name"
            autocomplete="given-name"
            value={form.firstName}
            onValue={set('firstName')}
            error={errors.firstName}
            class="half"
            data-autofocus
          />
          <Field
            label="Last name"
            autocomplete="family-name"
            value={form.lastName}
            onValue={set('lastName')}
            error={errors.lastName}
            class="half"
          />
          <Field
            label="Card number"
            autocomplete="cc-number"
            inputMode="numeric"
            value={form.cardNumber}
            onValue={(value) => set('cardNumber')(formatCardNumber(value))}
            error={
              errors.cardNumber ??
              (!card.potentiallyValid && digitsOnly(form.cardNumber).length > 0
                ? 'This card number is not valid.'
                : null)
            }
            adornment={card.brandName && <span class="brand-tag">{card.brandName}</span>}
          />
          <Field
            label="Expiry (MM/YY)"
            autocomplete="cc-exp"
            inputMode="numeric"
            placeholder="MM/YY"
            maxLength={5}
            value={form.expiry}
            onValue={(value) => set('expiry')(maskExpiryInput(value))}
            error={errors.expiry}
            class="half"
          />
          <Field
            label="Security code (CVV)"
            autocomplete="cc-csc"
            inputMode="numeric"
            maxLength={card.cvvSize}
            value={form.cvv}
            onValue={(value) => set('cvv')(digitsOnly(value))}
            error={errors.cvv}
            hint="Used for this payment only, never saved."
            class="half"
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>Billing address</legend>
        <AddressFields
          value={address}
          onChange={setAddress}
          errors={errors.address ?? {}}
          withNames={false}
          section="billing"
        />
        <Field
          label="Phone"
          type="tel"
          autocomplete="tel"
          value={form.phone}
          onValue={set('phone')}
          error={errors.phone}
        />
      </fieldset>
      <Alert message={props.error} />
      <Submit busy={props.busy}>Continue</Submit>
    </form>
  );
}
