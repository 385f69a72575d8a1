import { describe, expect, it } from 'vitest';
import { cleanCard, validateCard } from './card-form.js';
import { validateEnrolment } from './steps/enrol.js';

const MAY_2026 = new Date(2026, 4, 15);
const VISA = { cardNumber: '4111 1111 1111 1111', expiry: '12/29', cvv: '123' };

describe('the card form', () => {
  it('accepts a valid card', () => {
    expect(validateCard(VISA, MAY_2026)).toEqual({});
  });

  it('refuses a number failing the Luhn check, a past expiry and a short security code, field by field', () => {
    expect(validateCard({ cardNumber: '4111 1111 1111 1112', expiry: '04/26', cvv: '12' }, MAY_2026)).toEqual(
      {
        cardNumber: 'Enter a valid card number.',
        expiry: 'Enter a future expiry date as MM/YY.',
        cvv: 'Enter the 3-digit security code.',
      },
    );
  });

  it('asks for as many security code digits as the brand prints', () => {
    const amex = { cardNumber: '3782 822463 10005', expiry: '12/29' };
    expect(validateCard({ ...amex, cvv: '123' }, MAY_2026)).toEqual({
      cvv: 'Enter the 4-digit security code.',
    });
    expect(validateCard({ ...amex, cvv: '1234' }, MAY_2026)).toEqual({});
  });

  it('leaves the security code alone where none is taken (a merchant paying itself)', () => {
    expect(validateCard({ ...VISA, cvv: '' }, MAY_2026, false)).toEqual({});
    const form = { ...VISA, cvv: '', firstName: 'New', lastName: 'Shopper', phone: '+1 512 555 0100' };
    expect(validateEnrolment(form, MAY_2026, false)).toEqual({});
    expect(validateEnrolment(form, MAY_2026)).toEqual({ cvv: 'Enter the 3-digit security code.' });
  });

  it('sends the number as digits and the expiry as numbers', () => {
    expect(cleanCard({ cardNumber: '4111 1111 1111 1111', expiry: '12/29', cvv: '123' })).toEqual({
      number: '4111111111111111',
      expMonth: 12,
      expYear: 2029,
    });
  });

  it('checks the enrolment’s card the same way, beside its own fields', () => {
    const form = { ...VISA, cvv: '', firstName: 'New', lastName: '', phone: '+1 512 555 0100' };
    expect(validateEnrolment(form, MAY_2026)).toEqual({
      cvv: 'Enter the 3-digit security code.',
      lastName: 'Enter your last name.',
    });
  });
});
