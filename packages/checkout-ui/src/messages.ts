import type { CheckoutMessage } from '../../sdk/src/messages.js';
import { isOrigin } from './config.js';

/**
 * Messages to the SDK on the merchant's page (docs/internals/checkout-protocol.md §4). They go to
 * `window.parent` with the order's origin as targetOrigin, never `*`: if the frame has been navigated to
 * another origin, the browser drops the message instead of handing payment results to a stranger.
 */
export type { CheckoutMessage };

type Body<T> = T extends unknown ? Omit<T, 'source'> : never;
/** A message without its `source` field; the messenger adds it. */
export type OutgoingMessage = Body<CheckoutMessage>;

export interface ParentWindow {
  postMessage(message: unknown, targetOrigin: string): void;
}

export interface Messenger {
  send(message: OutgoingMessage): void;
}

export function buildMessage(message: OutgoingMessage): CheckoutMessage {
  return { source: 'wallet-checkout', ...message } as CheckoutMessage;
}

/** `parent` is the shop's page: the checkout runs framed only (main.tsx). */
export function createMessenger(parent: ParentWindow, parentOrigin: string): Messenger {
  if (!isOrigin(parentOrigin))
    throw new Error(`refusing to post messages to ${JSON.stringify(parentOrigin)}`);
  return {
    send(message) {
      parent.postMessage(buildMessage(message), parentOrigin);
    },
  };
}
