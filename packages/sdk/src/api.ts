import type { OrderInput } from './types.js';

/** An answer of the service that is not a success, with its `{ errorCode, errorMessage }`. */
export class ServiceError extends Error {
  constructor(
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'WalletSDKError';
  }
}

async function post<T>(serviceOrigin: string, path: string, body: unknown): Promise<T> {
  const response = await fetch(`${serviceOrigin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'omit',
  });
  const answer = (await response.json().catch(() => ({}))) as { errorCode?: string; errorMessage?: string };
  if (!response.ok) {
    throw new ServiceError(
      answer.errorCode ?? 'HTTP_ERROR',
      answer.errorMessage ?? `HTTP ${response.status}`,
    );
  }
  return answer as T;
}

export function createOrder(
  serviceOrigin: string,
  merchantId: string,
  order: OrderInput,
): Promise<{ orderId: string }> {
  return post(serviceOrigin, '/checkout/orders', { merchantId, order });
}

/** The shopper closed the checkout before it opened: the order is abandoned. Nothing to read back. */
export function closeOrder(serviceOrigin: string, orderId: string): void {
  void fetch(`${serviceOrigin}/checkout/api/orders/${encodeURIComponent(orderId)}/close`, {
    method: 'POST',
    mode: 'no-cors',
    keepalive: true,
    credentials: 'omit',
  }).catch(() => {});
}

export function lookupShopper(
  serviceOrigin: string,
  merchantId: string,
  email: string,
): Promise<{ known: boolean }> {
  return post(serviceOrigin, '/checkout/shoppers/lookup', { merchantId, email });
}
