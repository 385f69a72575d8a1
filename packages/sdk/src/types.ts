/** Shapes of the interface's sections 2.6–2.11, as the callbacks receive them. */

export interface LineItem {
  name?: string;
  /** Integer cents. */
  amount?: number;
  /** Written in capitals, exactly `SKU`. */
  SKU: string;
  category?: string;
}

/** The argument of `actions.createOrder` (section 2.6). Amounts are integer cents. */
export interface OrderInput {
  lineItems: LineItem[];
  subtotal?: number;
  total?: number;
  /** The merchant's own order id; returned later as `merchantOrderId`. */
  orderId?: string;
  orderDescription?: string;
  currencyCode?: string;
}

export interface Actions {
  /** Creates the order with the service; resolves with the service's order id. */
  createOrder(order: OrderInput): Promise<string>;
}

export interface AddressInfo {
  firstName: string;
  lastName: string;
  company: string | null;
  address1: string;
  address2: string | null;
  city: string;
  state: string;
  zip: string;
  country: string;
  phoneNumber: string | null;
  isDefaultBilling: boolean;
  isDefaultShipping: boolean;
  externalId: string;
}

export interface PaymentMethodInfo {
  address: AddressInfo;
  addressId: number;
  cardBrand: string;
  expMonth: number;
  expYear: number;
  externalId: string;
  fullNameCard: string;
  isDefault: boolean;
  last4CardNumber: string;
  needsCvv: boolean;
  nickName: string | null;
  paymentToken: string;
  storedCredentialsIdentifier: string | null;
}

export interface CustomerInfo {
  email: string;
  paymentMethod: PaymentMethodInfo;
  /** Null when the shopper's account has no phone number. */
  phoneNumber: string | null;
}

export interface ShippingMethod {
  externalId: string;
  name: string;
  /** Integer cents. */
  price: number;
}

export interface TransactionDetails {
  networkTransactionId: string | null;
  gatewayTransactionId: string;
  gatewayResponse: unknown;
  /** Connected checkout variant only. */
  stpReferenceNum?: string;
}

/**
 * What a merchant in `merchant` authorization mode receives instead of a payment. The service's order is
 * PROCESSING from here (it no longer expires); it stays so, because your processor decides the payment.
 *
 * @example
 * onPaymentSelected: async ({ orderId, sessionId, paymentId }) => {
 *   // Your server: POST /payments/credentials, the PAYMENT_CREDENTIALS webhook, your processor,
 *   // then POST /payments/externalresponse.
 *   await fetch('/checkout/complete', { method: 'POST', body: JSON.stringify({ orderId, sessionId, paymentId }) });
 * }
 */
export interface PaymentSelection {
  /** The service's order id (`ord_…`), as given to `getOrderId`. */
  orderId: string;
  /** The shopper's payment-carousel session: `sessionId` of `POST /payments/credentials`. */
  sessionId: string;
  /** The card the shopper chose: `paymentId` of `POST /payments/credentials`. */
  paymentId: string;
  billingInfo: AddressInfo;
  shippingInfo: AddressInfo | Record<string, never>;
  shippingMethod: ShippingMethod | Record<string, never>;
  /** Integer cents. */
  taxes: number;
}

export type SuccessCallback = (
  orderId: string,
  customerInfo: CustomerInfo,
  shippingInfo: AddressInfo | Record<string, never>,
  billingInfo: AddressInfo,
  /** `{}` when the order has no shipping, like `shippingInfo`. */
  shippingMethod: ShippingMethod | Record<string, never>,
  taxes: number,
  transactionDetails: TransactionDetails,
) => unknown;

export type ErrorCallback = (orderId: string, errorCode: string, errorMessage: string | null) => unknown;

export interface ButtonOptions {
  /** Called when checkout starts; call `actions.createOrder(order)` in it. May be async. */
  orderDetailsCallback: (actions: Actions) => unknown;
  /** The payment succeeded: seven positional arguments (interface section 6.2). */
  success: SuccessCallback;
  /** The payment failed: `"990"`, `"995"` or `"-1"`. */
  error: ErrorCallback;
  theme?: 'light' | 'dark';
  /** The service created the order: called at once, before `createOrder`'s promise resolves and the checkout shows. */
  getOrderId?: (orderId: string) => unknown;
  /** The shopper closed the checkout without paying. */
  onClose?: () => unknown;
  /**
   * `merchant` authorization mode: the shopper chose a card and pressed "Continue". The modal has closed
   * by then, and `success`, `error` and `onClose` are not called for this checkout: run the credentials
   * flow on your server with `sessionId` and `paymentId`, and show the shopper your own result. Needed
   * when the merchant account authorizes payments itself (without it the SDK logs an error).
   */
  onPaymentSelected?: (selection: PaymentSelection) => unknown;
}
