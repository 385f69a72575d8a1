import { describe, expect, it } from 'vitest';
import type { WalletCard } from '../api.js';
import { cardName } from './card-removal.js';
import { cardLabel } from './wallet.js';

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
  it('says the brand and last four digits in sentences, and the expiry and marks on its radio', () => {
    expect(cardName(VISA)).toBe('Visa ending in 1111');
    expect(cardLabel({ ...VISA, isDefault: true })).toBe('Visa ending in 1111, expires 03/30, default');
    expect(
      cardLabel({ ...VISA, cardBrand: 'american-express', last4CardNumber: '0005', expired: true }),
    ).toBe('American Express ending in 0005, expires 03/30, expired');
  });
});
