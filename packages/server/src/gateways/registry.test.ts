import { describe, expect, it } from 'vitest';
import { connectorFor, parseGatewaySettings } from './registry.js';

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

  it.each([0, 1.5, 120_001, 99_999_999_999_999, '1000'])(
    'refuses stored settings with a time-out of %j, which no payment could keep',
    (timeoutMs) => {
      expect(() => parseGatewaySettings({ ...SANDBOX, timeoutMs })).toThrow(
        'timeoutMs must be a whole number of ms from 1 to 120000',
      );
    },
  );

  it('takes time-outs from 1 ms to 2 minutes', () => {
    expect(parseGatewaySettings({ ...SANDBOX, timeoutMs: 120_000 }).timeoutMs).toBe(120_000);
    expect(parseGatewaySettings({ ...SANDBOX, timeoutMs: 1 }).timeoutMs).toBe(1);
  });
});
