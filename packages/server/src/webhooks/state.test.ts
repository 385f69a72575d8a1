import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { MESSAGE_STATES, type MessageEvent, transition } from './state.js';

describe('webhook message state machine', () => {
  it('follows the table', () => {
    expect(transition('PENDING', 'ANSWERED_2XX')).toBe('DELIVERED');
    expect(transition('PENDING', 'ATTEMPT_FAILED')).toBe('PENDING');
    expect(transition('PENDING', 'SCHEDULE_EXHAUSTED')).toBe('FAILED');
    expect(transition('DELIVERED', 'RESEND')).toBe('PENDING');
    expect(transition('FAILED', 'RESEND')).toBe('PENDING');
  });

  it('refuses to resend a pending message with WEBHOOK_NOT_RESENDABLE', () => {
    const error = (() => {
      try {
        transition('PENDING', 'RESEND');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).errorCode).toBe('WEBHOOK_NOT_RESENDABLE');
    expect((error as DomainError).status).toBe(409);
  });

  it('refuses attempt outcomes on settled messages', () => {
    const outcomes: MessageEvent[] = ['ANSWERED_2XX', 'ATTEMPT_FAILED', 'SCHEDULE_EXHAUSTED'];
    for (const from of ['DELIVERED', 'FAILED'] as const) {
      for (const event of outcomes) expect(() => transition(from, event)).toThrow(/cannot take the event/);
    }
  });

  it('has three states', () => {
    expect(MESSAGE_STATES).toEqual(['PENDING', 'DELIVERED', 'FAILED']);
  });
});
