import {
  checkCardNumber,
  digitsOnly,
  formatCardNumber,
  isValidCvv,
  maskExpiryInput,
  parseExpiry,
} from './card.js';
import { Field } from './ui.js';

/** Card entry shared by the enrolment and "Add a card": number, expiry and security code as typed. */

export interface CardDraft {
  /** Grouped as typed (`4111 1111 1111 1111`). */
  cardNumber: string;
  /** `MM/YY`. */
  expiry: string;
  cvv: string;
}

export type CardErrors = Partial<Record<keyof CardDraft, string>>;

export const emptyCard = (): CardDraft => ({ cardNumber: '', expiry: '', cvv: '' });

/**
 * Luhn and brand, a future expiry month, and as many CVV digits as the brand prints (`withCvv`: false
 * where the checkout takes no security code).
 */
export function validateCard(card: CardDraft, now = new Date(), withCvv = true): CardErrors {
  const errors: CardErrors = {};
  const check = checkCardNumber(card.cardNumber);
  if (!check.valid) errors.cardNumber = 'Enter a valid card number.';
  if (!parseExpiry(card.expiry, now)) errors.expiry = 'Enter a future expiry date as MM/YY.';
  if (withCvv && !isValidCvv(card.cvv, check.cvvSize)) {
    errors.cvv = `Enter the ${check.cvvSize}-digit security code.`;
  }
  return errors;
}

/** The number as digits and the expiry as numbers: what the API receives. Call it on a valid draft only. */
export function cleanCard(card: CardDraft): { number: string; expMonth: number; expYear: number } {
  const expiry = parseExpiry(card.expiry) as { month: number; year: number };
  return { number: digitsOnly(card.cardNumber), expMonth: expiry.month, expYear: expiry.year };
}

/**
 * The card inputs, without a wrapper: they sit in the caller's `grid` beside its other fields. The
 * number shows its brand and says at once when no more digits could make it valid. The security code is
 * asked only `withCvv`: where the merchant authorizes payments itself, nothing would ever send it.
 */
export function CardFields(props: {
  value: CardDraft;
  onChange: (value: CardDraft) => void;
  errors: CardErrors;
  withCvv: boolean;
  /** The card number takes focus when its step appears. */
  autofocus?: boolean;
}) {
  const { value, errors } = props;
  const check = checkCardNumber(value.cardNumber);
  const set = (key: keyof CardDraft) => (next: string) => props.onChange({ ...value, [key]: next });
  return (
    <>
      <Field
        label="Card number"
        autocomplete="cc-number"
        inputMode="numeric"
        value={value.cardNumber}
        onValue={(next) => set('cardNumber')(formatCardNumber(next))}
        error={
          errors.cardNumber ??
          (!check.potentiallyValid && digitsOnly(value.cardNumber).length > 0
            ? 'This card number is not valid.'
            : null)
        }
        adornment={check.brandName && <span class="brand-tag">{check.brandName}</span>}
        data-autofocus={props.autofocus || undefined}
      />
      <Field
        label="Expiry (MM/YY)"
        autocomplete="cc-exp"
        inputMode="numeric"
        placeholder="MM/YY"
        maxLength={5}
        value={value.expiry}
        onValue={(next) => set('expiry')(maskExpiryInput(next))}
        error={errors.expiry}
        class="half"
      />
      {props.withCvv && (
        <Field
          label="Security code (CVV)"
          autocomplete="cc-csc"
          inputMode="numeric"
          maxLength={check.cvvSize}
          value={value.cvv}
          onValue={(next) => set('cvv')(digitsOnly(next))}
          error={errors.cvv}
          hint="Used for this payment only, never saved."
          class="half"
        />
      )}
    </>
  );
}
