import { describe, expect, it } from 'vitest';
import { connectorFor } from './registry.js';

const SANDBOX = {
  gateway: 'sandbox',
  style: 'json',
  url: 'http://127.0.0.1:4010',
  timeoutMs: 1_000,
} as const;

describe('the gateway registry', () => {
  it('hands out the sandbox connector in staging only', () => {
    expect(connectorFor(SANDBOX, 'staging').name).toBe('sandbox');
    expect(() => connectorFor(SANDBOX, 'production')).toThrow(
      expect.objectContaining({
        name: 'GatewayError',
        kind: 'configuration',
        message:
          'production does not use the sandbox gateway; give the merchant an account at a real gateway',
      }),
    );
  });
});
