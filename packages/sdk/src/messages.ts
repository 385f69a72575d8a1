/**
 * The messages the hosted checkout (an iframe on the service's origin) sends to the SDK with postMessage.
 * The SDK trusts a message only when it comes from the service's origin AND from its own iframe's window;
 * the checkout, for its part, posts only to the merchant origin the order was created from.
 */
import type {
  AddressInfo,
  CustomerInfo,
  PaymentSelection,
  ShippingMethod,
  TransactionDetails,
} from './types.js';

export const MESSAGE_SOURCE = 'wallet-checkout';

export type CheckoutMessage =
  | { source: typeof MESSAGE_SOURCE; type: 'ready' }
  | {
      source: typeof MESSAGE_SOURCE;
      type: 'success';
      orderId: string;
      customerInfo: CustomerInfo;
      shippingInfo: AddressInfo | Record<string, never>;
      billingInfo: AddressInfo;
      shippingMethod: ShippingMethod | Record<string, never>;
      taxes: number;
      transactionDetails: TransactionDetails;
    }
  | {
      source: typeof MESSAGE_SOURCE;
      type: 'error';
      orderId: string;
      errorCode: string;
      errorMessage: string | null;
    }
  | { source: typeof MESSAGE_SOURCE; type: 'payment-selected'; selection: PaymentSelection }
  | { source: typeof MESSAGE_SOURCE; type: 'close' };

const TYPES = new Set(['ready', 'success', 'error', 'payment-selected', 'close']);

export interface MessageEventLike {
  origin: string;
  source: unknown;
  data: unknown;
}

export function isTrustedMessage(event: MessageEventLike, serviceOrigin: string, frame: unknown): boolean {
  if (event.origin !== serviceOrigin || frame === null || frame === undefined || event.source !== frame)
    return false;
  const data = event.data as { source?: unknown; type?: unknown } | null;
  return (
    typeof data === 'object' &&
    data !== null &&
    data.source === MESSAGE_SOURCE &&
    TYPES.has(data.type as string)
  );
}
