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

/** What a merchant in `merchant` authorization mode receives instead of a payment. */
export interface PaymentSelection {
  orderId: string;
  sessionId: string;
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
  /** The service created the order (before the checkout shows). */
  getOrderId?: (orderId: string) => unknown;
  /** The shopper closed the checkout without paying. */
  onClose?: () => unknown;
  /** `merchant` authorization mode: the shopper chose a card; run the credentials flow on your server. */
  onPaymentSelected?: (selection: PaymentSelection) => unknown;
}
