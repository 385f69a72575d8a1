import { DomainError } from '../errors.js';

/** The life of one webhook message; see the diagram in this folder's README. */
export const MESSAGE_STATES = ['PENDING', 'DELIVERED', 'FAILED'] as const;
export type MessageState = (typeof MESSAGE_STATES)[number];

/**
 * What can happen to a message:
 * - `ANSWERED_2XX`: the receiver answered an attempt with a 2xx status.
 * - `ATTEMPT_FAILED`: an attempt failed and the schedule has a delay left for another one.
 * - `SCHEDULE_EXHAUSTED`: an attempt failed and the schedule has no delay left.
 * - `RESEND`: a merchant or operator asked for the message to be sent again.
 */
export type MessageEvent = 'ANSWERED_2XX' | 'ATTEMPT_FAILED' | 'SCHEDULE_EXHAUSTED' | 'RESEND';

/** The only place that says which state follows which; a missing entry is a forbidden transition. */
const TRANSITIONS: Record<MessageState, Partial<Record<MessageEvent, MessageState>>> = {
  PENDING: { ANSWERED_2XX: 'DELIVERED', ATTEMPT_FAILED: 'PENDING', SCHEDULE_EXHAUSTED: 'FAILED' },
  DELIVERED: { RESEND: 'PENDING' },
  FAILED: { RESEND: 'PENDING' },
};

/** Thrown for a transition the table does not allow; resending a pending message is a client error. */
export class MessageTransitionError extends DomainError {
  constructor(
    readonly from: MessageState,
    readonly event: MessageEvent,
  ) {
    super(
      event === 'RESEND' ? 'WEBHOOK_NOT_RESENDABLE' : 'INTERNAL_ERROR',
      event === 'RESEND'
        ? `The webhook message is ${from}; only a DELIVERED or FAILED message can be sent again.`
        : `A webhook message in state ${from} cannot take the event ${event}.`,
    );
    this.name = 'MessageTransitionError';
  }
}

export function transition(from: MessageState, event: MessageEvent): MessageState {
  const to = TRANSITIONS[from][event];
  if (to === undefined) throw new MessageTransitionError(from, event);
  return to;
}
