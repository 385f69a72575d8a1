import { describe, expect, it } from 'vitest';
import { isOrigin, parseConfig } from './config.js';

const shell = JSON.stringify({ orderId: 'ord_1', merchantId: 'mch_1', parentOrigin: 'https://shop.example' });

describe('parseConfig', () => {
  it('reads the order, its merchant and the parent origin from the page', () => {
    expect(parseConfig(shell, '', '')).toEqual({
      orderId: 'ord_1',
      merchantId: 'mch_1',
      parentOrigin: 'https://shop.example',
      email: null,
      theme: null,
    });
  });

  it('takes the guest-redirect email from the fragment', () => {
    expect(parseConfig(shell, '#email=test.shopper%40example.com', '').email).toBe(
      'test.shopper@example.com',
    );
    expect(parseConfig(shell, '#email=nobody', '').email).toBeNull();
  });

  it('takes a theme from the query, then from the config', () => {
    const dark = JSON.stringify({
      orderId: 'o',
      merchantId: 'm',
      parentOrigin: 'http://localhost:3000',
      theme: 'dark',
    });
    expect(parseConfig(dark, '', '').theme).toBe('dark');
    expect(parseConfig(dark, '', '?theme=light').theme).toBe('light');
    expect(parseConfig(shell, '', '?theme=purple').theme).toBeNull();
  });

  it('refuses a page without a usable config', () => {
    expect(() => parseConfig(null, '', '')).toThrow(/configuration/);
    expect(() => parseConfig('{"parentOrigin":"https://a.example"}', '', '')).toThrow(/order id/);
    expect(() => parseConfig('{"orderId":"o","parentOrigin":"https://a.example"}', '', '')).toThrow(/shop/);
    expect(() => parseConfig('{"orderId":"o","merchantId":"m","parentOrigin":"*"}', '', '')).toThrow(
      /address/,
    );
  });
});

describe('isOrigin', () => {
  it.each([
    ['https://shop.example', true],
    ['http://localhost:3000', true],
    ['https://shop.example/', false],
    ['https://shop.example/cart', false],
    ['*', false],
    ['null', false],
    ['javascript:alert(1)', false],
    [42, false],
  ])('%s → %s', (value, expected) => {
    expect(isOrigin(value)).toBe(expected);
  });
});
