import { describe, expect, it } from 'vitest';
import type { WalletCard } from '../api.js';
import { cardName } from './card-removal.js';
import { cardLabel } from './wallet.js';
import { cardChanges, cardEditOf } from './wallet-edit.js';

const VISA: WalletCard = {
  paymentId: 'pm_1',
  cardBrand: 'visa',
  last4CardNumber: '1111',
  expMonth: 3,
  expYear: 2030,
  isDefault: false,
  needsCvv: false,
  expired: false,
  nickName: 'Groceries',
  fullNameCard: 'Test Shopper',
  billingAddressId: 1,
};

describe('how the card step names a card', () => {
  it('says the brand and last four digits in sentences, and the nickname, expiry and marks on its radio', () => {
    expect(cardName(VISA)).toBe('Visa ending in 1111');
    expect(cardLabel({ ...VISA, isDefault: true })).toBe(
      'Visa ending in 1111, Groceries, expires 03/30, default',
    );
    expect(
      cardLabel({
        ...VISA,
        cardBrand: 'american-express',
        last4CardNumber: '0005',
        nickName: null,
        expired: true,
      }),
    ).toBe('American Express ending in 0005, expires 03/30, expired');
  });
});

describe('"Edit this card"', () => {
  it('sends only what changed, a blank nickname as null, and asks for the name on the card', () => {
    const draft = cardEditOf(VISA);
    expect(cardChanges(VISA, draft)).toEqual({});
    expect(cardChanges(VISA, { ...draft, nickName: '  ', nameOnCard: ' T. Shopper ', billing: 2 })).toEqual({
      nickName: null,
      nameOnCard: 'T. Shopper',
      billingAddressId: 2,
    });
    // A new billing address is saved first; its id joins the changes then.
    expect(cardChanges(VISA, { ...draft, billing: 'new', nickName: 'Travel' })).toEqual({
      nickName: 'Travel',
    });
    expect(cardChanges(VISA, { ...draft, makeDefault: true })).toEqual({ isDefault: true });
    expect(cardChanges({ ...VISA, isDefault: true }, { ...draft, makeDefault: true })).toEqual({});
    expect(cardChanges(VISA, { ...draft, nameOnCard: ' ' })).toEqual({
      error: 'Enter the name on the card.',
    });
  });
});
