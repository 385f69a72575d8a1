import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashCode, isCodeShaped, maskEmail, newCode, newShopperToken, normalizeEmail } from './codes.js';

describe('one-time codes', () => {
  it('are 6 digits, leading zeros kept, and spread over every digit', () => {
    const codes = Array.from({ length: 2_000 }, newCode);
    expect(codes.every(isCodeShaped)).toBe(true);
    const firstDigits = new Set(codes.map((code) => code[0]));
    expect(firstDigits.size).toBe(10);
    expect(new Set(codes).size).toBeGreaterThan(1_990);
  });

  it('hash differently for another key, order or email', () => {
    const key = randomBytes(32);
    const input = { orderId: 'ord_1', email: 'a@b.c', code: '123456' };
    const hash = hashCode(key, input);
    expect(hashCode(key, input)).toBe(hash);
    expect(hash).not.toContain('123456');
    expect(hashCode(randomBytes(32), input)).not.toBe(hash);
    expect(hashCode(key, { ...input, orderId: 'ord_2' })).not.toBe(hash);
    expect(hashCode(key, { ...input, email: 'x@b.c' })).not.toBe(hash);
  });

  it.each(['12345', '1234567', '12a456', ' 123456', ''])('refuse %j as a code', (code) => {
    expect(isCodeShaped(code)).toBe(false);
  });
});

describe('shopper tokens', () => {
  it('are 32 random bytes in base64url', () => {
    const token = newShopperToken();
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newShopperToken()).not.toBe(token);
  });
});

describe('emails', () => {
  it.each([
    ['test.shopper@example.com', 't***r@example.com'],
    ['ab@example.com', 'a***@example.com'],
    ['a@example.com', 'a***@example.com'],
    ['Ada.Lovelace@Example.COM', 'A***e@Example.COM'],
    ['😀zoë😀@exämple.com', '😀***😀@exämple.com'],
  ])('masks %s as %s', (email, masked) => {
    expect(maskEmail(email)).toBe(masked);
  });

  it('compare without case or surrounding spaces', () => {
    expect(normalizeEmail('  Ada@Example.COM ')).toBe('ada@example.com');
  });
});
