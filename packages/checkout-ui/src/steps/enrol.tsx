import { useState } from 'preact/hooks';
import {
  type AddressErrors,
  BillingAddressFieldset,
  cleanAddress,
  emptyAddress,
  validateAddress,
} from '../address-form.js';
import type { AddressInput } from '../api.js';
import { digitsOnly, formatCardNumber } from '../card.js';
import { type CardDraft, CardFields, cleanCard, validateCard } from '../card-form.js';
import type { EnrolmentDraft } from '../flow.js';
import { Alert, Field, focusFirstInvalid, onSubmitGuard, StepTitle, Submit } from '../ui.js';

interface Form extends CardDraft {
  firstName: string;
  lastName: string;
  phone: string;
}

type Errors = Partial<Record<keyof Form, string>> & { address?: AddressErrors };

export function validateEnrolment(form: Form, now = new Date(), withCvv = true): Errors {
  const errors: Errors = validateCard(form, now, withCvv);
  if (!form.firstName.trim()) errors.firstName = 'Enter your first name.';
  if (!form.lastName.trim()) errors.lastName = 'Enter your last name.';
  if (digitsOnly(form.phone).length < 10) errors.phone = 'Enter a phone number with its area code.';
  return errors;
}

export function EnrolStep(props: {
  email: string;
  draft: EnrolmentDraft | null;
  /** False where the merchant authorizes payments itself: no security code is taken. */
  asksCvv: boolean;
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
  const set = (key: keyof Form) => (value: string) => setForm({ ...form, [key]: value });

  const submit = onSubmitGuard(props.busy, () => {
    const found: Errors = validateEnrolment(form, new Date(), props.asksCvv);
    const addressErrors = validateAddress(address, false);
    if (Object.keys(addressErrors).length) found.address = addressErrors;
    setErrors(found);
    if (Object.keys(found).length) return focusFirstInvalid();
    // The server's EnrolBody is strict: the billing address carries no name or phone (they are the shopper's).
    const { firstName: _f, lastName: _l, phoneNumber: _p, ...billingAddress } = cleanAddress(address);
    const phone = form.phone.trim();
    props.onSubmit({
      firstName: form.firstName.trim(),
      lastName: form.lastName.trim(),
      // Digits, keeping a leading "+": what the server's phone pattern takes.
      phone: `${phone.startsWith('+') ? '+' : ''}${digitsOnly(phone)}`,
      card: { ...cleanCard(form), ...(props.asksCvv ? { cvv: form.cvv } : {}) },
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
          <CardFields
            value={form}
            onChange={(card) => setForm({ ...form, ...card })}
            errors={errors}
            withCvv={props.asksCvv}
          />
        </div>
      </fieldset>
      <BillingAddressFieldset value={address} onChange={setAddress} errors={errors.address ?? {}}>
        <Field
          label="Phone"
          type="tel"
          autocomplete="tel"
          value={form.phone}
          onValue={set('phone')}
          error={errors.phone}
        />
      </BillingAddressFieldset>
      <Alert message={props.error} />
      <Submit busy={props.busy}>Continue</Submit>
    </form>
  );
}
