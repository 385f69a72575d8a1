import type {
  AddressInfo,
  CustomerInfo,
  PaymentSelection,
  ShippingMethod,
  TransactionDetails,
} from '../../sdk/src/types.js';

/**
 * The checkout page's API (docs/internals/checkout-protocol.md §3): same origin, JSON, no cookies. The
 * shopper token lives in this module's closure only — never a cookie or storage — and is lost with the
 * page, by design. Only a shopper who ticks "Remember me on this device" has a device token kept, in the
 * page's own storage (DeviceMemory). Where the protocol leaves a shape open, the choice is written in this
 * package's README ("What the UI expects from the server").
 */

export type { ShippingMethod };

export interface OrderLineItem {
  name?: string;
  SKU: string;
  /** Integer cents. */
  amount?: number;
  category?: string;
}

/** `GET /checkout/api/orders/:orderId` */
export interface OrderSummary {
  orderId: string;
  status: 'CREATED' | 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'ABANDONED';
  merchantName: string;
  variant: 'standard' | 'connected';
  /** `merchant`: the last button reads "Continue" and the page hands the merchant the selection. */
  authorizationMode: 'service' | 'merchant';
  /** ISO 4217. */
  currency: string;
  lineItems: OrderLineItem[];
  /** Integer cents. */
  subtotal: number;
  /** The merchant's list, in its order; empty when the merchant does not ship (no shipping step). */
  shippingMethods: ShippingMethod[];
  description: string | null;
  /** ISO 8601. */
  expiresAt: string;
  /** Days "Remember me on this device" lasts; null: the service remembers no device (not offered). */
  rememberDeviceDays: number | null;
  /** Not sent by the server today; honoured if it ever is. */
  theme?: 'light' | 'dark';
}

export type CodeRequest = { status: 'sent'; destination: string } | { status: 'enrol' };

export interface ShopperTokenGrant {
  shopperToken: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** A saved card as the carousel shows it. Never a card number. */
export interface WalletCard {
  paymentId: string;
  cardBrand: string;
  last4CardNumber: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  isDefault: boolean;
  needsCvv: boolean;
  /** Past its expiry month: shown, marked, not selectable. */
  expired: boolean;
  nickName: string | null;
  fullNameCard: string;
  /** The `addressId` of the card's billing address in the wallet. */
  billingAddressId: number;
}

export interface WalletAddress extends AddressInfo {
  addressId: number;
}

/** `GET /checkout/api/wallet`: cards default first. */
export interface Wallet {
  email: string;
  phone: string | null;
  firstName: string;
  lastName: string;
  cards: WalletCard[];
  addresses: WalletAddress[];
}

/** An address as the shopper types it (`POST /checkout/api/wallet/addresses`, enrolment's billing address). */
export interface AddressInput {
  firstName: string;
  lastName: string;
  company: string | null;
  address1: string;
  address2: string | null;
  city: string;
  state: string;
  zip: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  phoneNumber: string | null;
}

/**
 * `PATCH /checkout/api/wallet/addresses/{addressId}`: the fields that change. New values save a new
 * address in the old one's place, under a new `addressId`; a default can be taken, not given away.
 */
export type AddressChanges = Partial<AddressInput> & { isDefaultShipping?: true; isDefaultBilling?: true };

/** `PATCH /checkout/api/wallet/cards/{paymentId}`: the fields that change; the number and expiry cannot. */
export interface CardChanges {
  /** Empty or null takes the nickname away. */
  nickName?: string | null;
  nameOnCard?: string;
  billingAddressId?: number;
  isDefault?: true;
}

/** The card's billing address at enrolment: the name and phone are the shopper's. */
export type EnrolmentAddress = Omit<AddressInput, 'firstName' | 'lastName' | 'phoneNumber'>;

/**
 * `POST /checkout/api/orders/:orderId/enrol` (the server's `EnrolBody`, strict): checks the card, keeps
 * the details without the CVV and sends the code; `otp/verify` then creates the wallet.
 */
export interface EnrolmentInput {
  email: string;
  firstName: string;
  lastName: string;
  /** Such as `+15125550100`. */
  phone: string;
  card: {
    number: string;
    expMonth: number;
    /** Four digits. */
    expYear: number;
    /**
     * Checked by the server, never stored: the UI sends it again with the first `pay`. Not taken where the
     * merchant authorizes payments itself (`authorizationMode` `merchant`).
     */
    cvv?: string;
  };
  billingAddress: EnrolmentAddress;
}

/**
 * `POST /checkout/api/wallet/cards`: a card for the signed-in shopper's wallet. No security code: the one
 * typed with the card goes with the payment that follows. The same number again renews that card (200).
 */
export interface NewCardInput {
  /** Digits. */
  number: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  nameOnCard: string;
  /** The `addressId` of an address in the wallet. */
  billingAddressId: number;
  /** Without it, the card is the default only when the wallet has no default that can still pay. */
  isDefault?: boolean;
}

export interface Selection {
  paymentId: string;
  shippingAddressId?: number;
  shippingMethodId?: string;
}

/** `POST /checkout/api/orders/:orderId/quote`: integer cents. */
export interface Quote {
  currency: string;
  subtotal: number;
  shipping: number;
  taxes: number;
  total: number;
}

export interface SuccessArguments {
  orderId: string;
  customerInfo: CustomerInfo;
  shippingInfo: AddressInfo | Record<string, never>;
  billingInfo: AddressInfo;
  /** `{}` when the merchant does not ship (docs/internals/checkout-protocol.md §3). */
  shippingMethod: ShippingMethod | Record<string, never>;
  taxes: number;
  transactionDetails: TransactionDetails;
}

/** `POST /checkout/api/orders/:orderId/pay` */
export type PayResult =
  | ({ outcome: 'success' } & SuccessArguments)
  | { outcome: 'error'; orderId: string; errorCode: string; errorMessage: string | null }
  | { outcome: 'payment-selected'; selection: PaymentSelection }
  /** The gateway has not decided yet: the same submit again asks again (docs/internals/checkout-protocol.md). */
  | { outcome: 'pending'; orderId: string };

/**
 * A failed request: the server's `{ errorCode, errorMessage }`, or, with status 0, `NETWORK_ERROR` when it
 * was not reached and `TIMEOUT` when it did not answer in time.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    /** `OTP_INVALID`: tries left before the code locks. */
    readonly triesLeft: number | null = null,
    /** `OTP_THROTTLED` / 429: seconds until another code may be asked for. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** 15 s for a request the service answers from its database alone: one not answered by then is lost. */
const REQUEST_TIMEOUT_MS = 15_000;
/**
 * 30 s for a request that waits on another server: a payment on the gateway (10 s per try by default, and
 * one retry after a time-out: 20 s) and a code on the mail server (10 s to connect, 10 s to be greeted).
 */
const SLOW_REQUEST_TIMEOUT_MS = 30_000;

const firstNumber = (text: string, pattern: RegExp): number | null => {
  const match = pattern.exec(text);
  return match ? Number(match[1]) : null;
};

async function toApiError(response: Response): Promise<ApiError> {
  let body: {
    errorCode?: unknown;
    errorMessage?: unknown;
    triesLeft?: unknown;
    retryAfterSeconds?: unknown;
  } = {};
  try {
    body = await response.json();
  } catch {
    // Not our JSON (a proxy's error page): the status alone speaks.
  }
  const code = typeof body.errorCode === 'string' ? body.errorCode : `HTTP_${response.status}`;
  const message =
    typeof body.errorMessage === 'string'
      ? body.errorMessage
      : 'Something went wrong on our side. Try again.';
  const triesLeft =
    typeof body.triesLeft === 'number' ? body.triesLeft : firstNumber(message, /(\d+) (?:try|tries) left/);
  const retryAfter =
    typeof body.retryAfterSeconds === 'number'
      ? body.retryAfterSeconds
      : (firstNumber(response.headers.get('retry-after') ?? '', /^(\d+)$/) ??
        firstNumber(message, /(\d+) seconds?/));
  return new ApiError(response.status, code, message, triesLeft, code === 'OTP_INVALID' ? null : retryAfter);
}

/**
 * Where "Remember me on this device" keeps its device token, under a key of the shop's own, since several
 * shops may share a site and the service signs a device in at the shop that remembered it only.
 */
export interface DeviceMemory {
  /** False where the page may keep nothing: the checkbox is not offered. */
  readonly available: boolean;
  get(): string | null;
  /** Keeps the token until `expiresAt` (ISO 8601), when the service stops recognizing it. */
  set(deviceToken: string, expiresAt: string): void;
  clear(): void;
}

/** The one key of every shop, from before devices were remembered per shop; read when a shop has none. */
const LEGACY_DEVICE_KEY = 'wallet-checkout.device';

/** Where nothing can be kept: the checkbox is not offered. */
const NO_DEVICE_MEMORY: DeviceMemory = {
  available: false,
  get: () => null,
  set: () => undefined,
  clear: () => undefined,
};

/** One place a page can keep a value in; any of its methods may throw where the browser refuses it. */
interface Place {
  get(key: string): string | null;
  set(key: string, value: string, expiresAt: string): void;
  remove(key: string): void;
}

/** The page's `localStorage`, which browsers partition by the top-level site; it keeps no expiry. */
function localStoragePlace(storage: () => Storage): Place {
  return {
    get: (key) => storage().getItem(key),
    set: (key, value) => storage().setItem(key, value),
    remove: (key) => storage().removeItem(key),
  };
}

/**
 * Cookies of the checkout's pages, for a browser that refuses storage to a frame of another site (as one
 * that blocks third-party cookies does) but keeps a `Partitioned` cookie (CHIPS), apart for each top-level
 * site as that storage would be. `Secure`: kept over https, and over http on localhost or a loopback
 * address only. The checkout's API calls omit credentials, so never carry it; its page and asset requests
 * do, and the service reads it nowhere (its logs redact cookies).
 */
function cookiePlace(jar: { cookie: string }): Place {
  const attributes = 'Path=/checkout/; Secure; SameSite=None; Partitioned';
  return {
    get(key) {
      const pair = jar.cookie.split('; ').find((cookie) => cookie.startsWith(`${key}=`));
      return pair === undefined ? null : decodeURIComponent(pair.slice(key.length + 1));
    },
    set(key, value, expiresAt) {
      jar.cookie = `${key}=${encodeURIComponent(value)}; Expires=${new Date(expiresAt).toUTCString()}; ${attributes}`;
    },
    remove(key) {
      jar.cookie = `${key}=; Max-Age=0; ${attributes}`;
    },
  };
}

/**
 * DeviceMemory for `merchantId`'s checkout: in `localStorage`, else in a partitioned cookie where the
 * browser refuses that storage to the frame, else nowhere. A token is read from either, then from the
 * key every shop shared before.
 */
export function storedDeviceMemory(
  merchantId: string,
  browser: { storage: () => Storage; cookies: { cookie: string } } = {
    storage: () => window.localStorage,
    cookies: document,
  },
): DeviceMemory {
  const key = `${LEGACY_DEVICE_KEY}.${merchantId}`;
  const local = localStoragePlace(browser.storage);
  const cookies = cookiePlace(browser.cookies);
  const attempt = <T>(action: () => T, otherwise: T): T => {
    try {
      return action();
    } catch {
      return otherwise;
    }
  };
  const keeps = (place: Place) =>
    attempt(() => {
      const probe = `${LEGACY_DEVICE_KEY}.probe`;
      place.set(probe, '1', new Date(Date.now() + 60_000).toISOString());
      const kept = place.get(probe) === '1';
      place.remove(probe);
      return kept;
    }, false);
  const keeper = [local, cookies].find(keeps);
  return {
    available: keeper !== undefined,
    get: () =>
      attempt(() => local.get(key), null) ??
      attempt(() => cookies.get(key), null) ??
      attempt(() => local.get(LEGACY_DEVICE_KEY), null),
    set: (deviceToken, expiresAt) => attempt(() => keeper?.set(key, deviceToken, expiresAt), undefined),
    // The shop's own only: the key from before may hold another shop's token on this site, left to it.
    clear: () => {
      attempt(() => local.remove(key), undefined);
      attempt(() => cookies.remove(key), undefined);
    },
  };
}

export type CheckoutApi = ReturnType<typeof createApi>;

export function createApi(
  orderId: string,
  options: { fetch?: Fetch; base?: string; device?: DeviceMemory } = {},
) {
  const {
    fetch: fetchImpl = (input, init) => fetch(input, init),
    base = '/checkout/api',
    device = NO_DEVICE_MEMORY,
  } = options;
  let token: string | null = null;
  const order = `${base}/orders/${encodeURIComponent(orderId)}`;

  /**
   * One request, given up after `timeoutMs` (the answer's body included) as `TIMEOUT`, or as
   * `NETWORK_ERROR` when the service cannot be reached: either way it may have been carried out.
   */
  async function call<T>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
    timeoutMs = REQUEST_TIMEOUT_MS,
  ): Promise<T> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    const init: RequestInit = {
      method,
      signal: abort.signal,
      // Same origin, and still no cookies: the token is the only credential.
      credentials: 'omit',
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
    try {
      const response = await fetchImpl(url, init);
      if (!response.ok) throw await toApiError(response);
      if (response.status === 204) return undefined as T;
      return (await response.json()) as T;
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (abort.signal.aborted) {
        throw new ApiError(
          0,
          'TIMEOUT',
          'The checkout service did not answer in time. Check your connection and try again.',
        );
      }
      throw new ApiError(
        0,
        'NETWORK_ERROR',
        'We could not reach the checkout service. Check your connection and try again.',
      );
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    get signedIn(): boolean {
      return token !== null;
    },
    /** Forgets a token the server no longer takes (a 401). */
    forgetToken(): void {
      token = null;
    },
    /**
     * "Not you?": the server ends the sign-in and forgets this device, and both tokens are forgotten here
     * even when it could not be reached (the sign-in then ends at its expiry, the device at its own).
     */
    async signOut(): Promise<void> {
      const deviceToken = device.get();
      device.clear();
      try {
        await call<{ signedOut: true }>(
          'POST',
          `${base}/sign-out`,
          deviceToken ? { deviceToken } : undefined,
        );
      } catch {
        // Signed out here all the same: the shopper asked to leave.
      } finally {
        token = null;
      }
    },
    /** Whether the code step may offer "Remember me on this device". */
    get canRememberDevice(): boolean {
      return device.available;
    },
    /** Whether this device remembers a shopper, to sign in with `resume` before asking for an email. */
    get remembersDevice(): boolean {
      return device.get() !== null;
    },
    /**
     * Signs in the shopper this device remembers, without a code; with `email` (a guest redirect), only if
     * it remembers that shopper. False when it remembers nobody (any more): the device token is forgotten,
     * and the shopper signs in with a code. Another failure (the network) keeps it for the next checkout.
     */
    async resume(email?: string): Promise<boolean> {
      const deviceToken = device.get();
      if (!deviceToken) return false;
      try {
        const grant = await call<ShopperTokenGrant & { deviceExpiresAt?: string }>(
          'POST',
          `${order}/resume`,
          {
            deviceToken,
            ...(email ? { email } : {}),
          },
        );
        token = grant.shopperToken;
        // Kept as this shop's own from now on, should it have come from the key from before; a process of
        // the version before (a rolling upgrade) tells no expiry, and what is kept is left as it is.
        if (grant.deviceExpiresAt) device.set(deviceToken, grant.deviceExpiresAt);
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.errorCode === 'DEVICE_NOT_RECOGNIZED') device.clear();
        return false;
      }
    },
    getOrder: () => call<OrderSummary>('GET', order),
    /** A known shopper gets a code; an email without a wallet gets `{ status: 'enrol' }`. */
    requestCode: (email: string) =>
      call<CodeRequest>('POST', `${order}/otp`, { email }, {}, SLOW_REQUEST_TIMEOUT_MS),
    /** A new shopper's details; answers where the code went. Verifying it creates the wallet. */
    enrol: (input: EnrolmentInput) =>
      call<CodeRequest>('POST', `${order}/enrol`, input, {}, SLOW_REQUEST_TIMEOUT_MS),
    /** With `rememberDevice`, the device token answered is kept for later checkouts on this device. */
    async verifyCode(email: string, code: string, rememberDevice = false): Promise<void> {
      const grant = await call<ShopperTokenGrant & { deviceToken?: string; deviceExpiresAt?: string }>(
        'POST',
        `${order}/otp/verify`,
        { email, code, ...(rememberDevice ? { rememberDevice } : {}) },
      );
      token = grant.shopperToken;
      if (grant.deviceToken && grant.deviceExpiresAt) device.set(grant.deviceToken, grant.deviceExpiresAt);
    },
    getWallet: () => call<Wallet>('GET', `${base}/wallet`),
    addAddress: (input: AddressInput) => call<WalletAddress>('POST', `${base}/wallet/addresses`, input),
    /** The saved card, new (201) or renewed (200: the number was in the wallet), with `needsCvv: false`. */
    addCard: (input: NewCardInput) => call<WalletCard>('POST', `${base}/wallet/cards`, input),
    /** The address as it is now (under a new `addressId` if its values changed) and the wallet. */
    editAddress: (addressId: number, changes: AddressChanges) =>
      call<{ address: WalletAddress; wallet: Wallet }>(
        'PATCH',
        `${base}/wallet/addresses/${addressId}`,
        changes,
      ),
    /** The card as it is now and the wallet (the default mark may have moved to it). */
    editCard: (paymentId: string, changes: CardChanges) =>
      call<{ card: WalletCard; wallet: Wallet }>(
        'PATCH',
        `${base}/wallet/cards/${encodeURIComponent(paymentId)}`,
        changes,
      ),
    /**
     * The wallet as it is once the card is gone: if it was the default, the newest card that can still pay
     * is now. Removing a card already removed answers the same. No body, so no `content-type` either.
     */
    removeCard: (paymentId: string) =>
      call<Wallet>('DELETE', `${base}/wallet/cards/${encodeURIComponent(paymentId)}`),
    /**
     * The wallet as it is once the address is gone: a default it was passes to the newest address left.
     * The billing address of a card in the wallet is refused (409 ADDRESS_IN_USE), with the reason.
     */
    removeAddress: (addressId: number) => call<Wallet>('DELETE', `${base}/wallet/addresses/${addressId}`),
    /** "Delete my wallet": the wallet is erased and this sign-in, like every other, ends; no device remembers it. */
    async deleteWallet(): Promise<void> {
      await call<{ deleted: true }>('DELETE', `${base}/wallet`);
      token = null;
      device.clear();
    },
    quote: (selection: Selection) => call<Quote>('POST', `${order}/quote`, selection),
    /**
     * One `Idempotency-Key` per distinct payment attempt: a retried submit can never charge twice. Given up
     * after 30 s, by when the gateway has answered or timed out twice at its default time-out.
     */
    pay: (request: Selection & { cvv?: string; total?: number }, idempotencyKey: string) =>
      call<PayResult>(
        'POST',
        `${order}/pay`,
        request,
        { 'idempotency-key': idempotencyKey },
        SLOW_REQUEST_TIMEOUT_MS,
      ),
    /** The shopper left: the order becomes ABANDONED. Survives the frame being removed right after. */
    close(): void {
      void fetchImpl(`${order}/close`, { method: 'POST', keepalive: true, credentials: 'omit' }).catch(
        () => {},
      );
    },
  };
}
