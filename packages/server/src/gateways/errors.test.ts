import { describe, expect, it } from 'vitest';
import { GatewayError, sdkResult } from './errors.js';

describe('sdkResult', () => {
  it('gives the interface’s codes and messages exactly (section 7.2)', () => {
    expect(sdkResult('approved')).toEqual({ kind: 'success' });
    expect(sdkResult('invalid_card')).toEqual({
      kind: 'error',
      errorCode: '990',
      errorMessage: 'Card was declined',
    });
    expect(sdkResult('declined')).toEqual({
      kind: 'error',
      errorCode: '995',
      errorMessage: 'Unable to process card',
    });
    expect(sdkResult('error')).toEqual({ kind: 'error', errorCode: '-1', errorMessage: null });
  });

  it.each([
    'timeout',
    'network',
    'rejected_request',
    'unexpected_response',
    'unsupported',
    'configuration',
  ] as const)('reports a %s gateway error as -1 with a null message', (kind) => {
    expect(sdkResult(new GatewayError(kind, 'detail for the log'))).toEqual({
      kind: 'error',
      errorCode: '-1',
      errorMessage: null,
    });
  });
});
