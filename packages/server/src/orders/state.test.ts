import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { type OrderEvent, transition } from './state.js';
import { ORDER_STATES, type OrderState } from './types.js';

const EVENTS: OrderEvent[] = ['SUBMIT_PAYMENT', 'PAYMENT_SUCCEEDED', 'PAYMENT_FAILED', 'CLOSE', 'EXPIRE'];

/** Every allowed transition; everything else must be refused. */
const ALLOWED: [OrderState, OrderEvent, OrderState][] = [
  ['CREATED', 'SUBMIT_PAYMENT', 'PROCESSING'],
  ['CREATED', 'CLOSE', 'ABANDONED'],
  ['CREATED', 'EXPIRE', 'ABANDONED'],
  ['PROCESSING', 'PAYMENT_SUCCEEDED', 'SUCCEEDED'],
  ['PROCESSING', 'PAYMENT_FAILED', 'FAILED'],
];

describe('order state machine', () => {
  it.each(ALLOWED)('%s --%s--> %s', (from, event, to) => {
    expect(transition(from, event)).toBe(to);
  });

  it('refuses every other pair with ORDER_STATE_CONFLICT (409)', () => {
    for (const from of ORDER_STATES) {
      for (const event of EVENTS) {
        if (ALLOWED.some(([f, e]) => f === from && e === event)) continue;
        let caught: unknown;
        try {
          transition(from, event, 'ord_x');
        } catch (error) {
          caught = error;
        }
        expect(caught, `${from} + ${event}`).toBeInstanceOf(DomainError);
        expect((caught as DomainError).errorCode).toBe('ORDER_STATE_CONFLICT');
        expect((caught as DomainError).status).toBe(409);
        expect((caught as DomainError).message).toBe(`order ord_x is ${from}; it cannot take ${event}.`);
      }
    }
  });

  it('never abandons a payment under way, and ends every checkout in exactly one outcome', () => {
    expect(() => transition('PROCESSING', 'CLOSE')).toThrow(/PROCESSING/);
    expect(() => transition('PROCESSING', 'EXPIRE')).toThrow(/PROCESSING/);
    for (const end of ['SUCCEEDED', 'FAILED', 'ABANDONED'] as const) {
      for (const event of EVENTS) expect(() => transition(end, event)).toThrow(DomainError);
    }
  });
});
