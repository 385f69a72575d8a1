import { describe, expect, it } from 'vitest';
import { Secret } from '../secret.js';
import { type AuthorizationRequest, assertSupported, type GatewayConnector } from './gateway.js';

const CARD_ONLY: GatewayConnector = {
  name: 'card-only',
  supports: { networkTokens: false, connectedVariant: false, idempotentReplay: false },
  authorize: () => Promise.reject(new Error('not called')),
};

const REQUEST: AuthorizationRequest = {
  amount: 100,
  currency: 'USD',
  orderReference: 'ord_1',
  source: { type: 'card', pan: new Secret('4111111111111111'), expMonth: 12, expYear: 2030 },
  billingAddress: {
    firstName: 'Taylor',
    lastName: 'Shopper',
    address1: '100 Congress Ave',
    address2: null,
    city: 'Austin',
    state: 'TX',
    zip: '78701',
    country: 'US',
    phoneNumber: null,
  },
  storedCredential: { kind: 'initial', initiator: 'cardholder' },
  variant: 'standard',
  idempotencyKey: 'idem_1',
};

describe('assertSupported', () => {
  it('lets through what the connector declares', () => {
    expect(() => assertSupported(CARD_ONLY, REQUEST)).not.toThrow();
  });

  it('throws for a network token or the connected variant the connector does not declare', () => {
    const token: AuthorizationRequest = {
      ...REQUEST,
      source: {
        type: 'network_token',
        token: new Secret('4895370012341111'),
        cryptogram: new Secret('AAAAAAAAAAAAAAAAAAAAAAAAAAA='),
        expMonth: 6,
        expYear: 2030,
      },
    };
    expect(() => assertSupported(CARD_ONLY, token)).toThrow(
      expect.objectContaining({ kind: 'unsupported', message: expect.stringContaining('network tokens') }),
    );
    expect(() => assertSupported(CARD_ONLY, { ...REQUEST, variant: 'connected' })).toThrow(
      expect.objectContaining({ kind: 'unsupported', message: expect.stringContaining('connected') }),
    );
  });
});
