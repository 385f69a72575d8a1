/**
 * Table types for Kysely. Conventions shared by both engines: times are integer milliseconds since the
 * epoch (`*_at`), booleans are 0/1 integers, JSON is text, ciphertexts are key-ring envelopes (text).
 * Each domain folder reads and writes only its own tables.
 */
import type { Generated } from 'kysely';

export interface MerchantsTable {
  id: string;
  name: string;
  webhook_url: string | null;
  /** JSON array of origins, e.g. `["https://shop.example"]`. */
  allowed_origins: string;
  /** JSON array of approved credential types; empty means not approved for the credentials flow. */
  credential_types: string;
  credentials_approved_at: number | null;
  variant: 'standard' | 'connected';
  authorization_mode: 'service' | 'merchant';
  /** JSON array of `{ externalId, name, price }`. */
  shipping_methods: string;
  /** JSON object `{ ratesByState: { [state]: basisPoints } }`. */
  tax_settings: string;
  /** 1 when the checkout offers "Remember me on this device", 0 when it asks for a code every time. */
  remember_devices: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  merchant_id: string;
  /** First characters of the key, shown in listings so an operator can tell keys apart. */
  prefix: string;
  /** SHA-256 of the whole key, hex. */
  hash: string;
  created_at: number;
  revoked_at: number | null;
  /** When the key last authenticated a request, to the minute; null until then. */
  last_used_at: number | null;
}

export interface WebhookSecretsTable {
  id: string;
  merchant_id: string;
  secret_ciphertext: string;
  created_at: number;
  /** Null for the current secret; a rotated-out secret keeps signing until this time. */
  expires_at: number | null;
}

export interface ShoppersTable {
  id: string;
  email: string;
  email_normalized: string;
  phone: string | null;
  first_name: string;
  last_name: string;
  created_at: number;
}

export interface AddressesTable {
  id: Generated<number>;
  external_id: string;
  shopper_id: string;
  first_name: string;
  last_name: string;
  company: string | null;
  address1: string;
  address2: string | null;
  city: string;
  state: string;
  zip: string;
  country: string;
  phone_number: string | null;
  is_default_billing: number;
  is_default_shipping: number;
  created_at: number;
  /** When the shopper removed it from the wallet; null while it is in the wallet. */
  removed_at: number | null;
}

export interface CardsTable {
  /** The card's `externalId`, which the interface calls `paymentId`. */
  id: string;
  shopper_id: string;
  vault_id: string;
  billing_address_id: number;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  name_on_card: string;
  nickname: string | null;
  is_default: number;
  needs_cvv: number;
  /**
   * The network transaction id of the card's first successful payment at any merchant, as versions before
   * `024_stored_credentials` wrote it. Read no more: `stored_credentials` keeps one per merchant.
   */
  stored_credentials_identifier: string | null;
  created_at: number;
  /** When the shopper removed it from the wallet; null while it is in the wallet. */
  removed_at: number | null;
}

/**
 * A saved card's stored credential at one merchant (wallet/): the network transaction id of the card's
 * first successful payment there, which its later payments there name.
 */
export interface StoredCredentialsTable {
  card_id: string;
  merchant_id: string;
  network_transaction_id: string;
  created_at: number;
}

export interface VaultCardsTable {
  id: string;
  /** Empty once erased. */
  pan_ciphertext: string;
  /**
   * HMAC-SHA-256 of the card number under a key derived from the key ring, for de-duplication; empty once
   * erased.
   */
  pan_hmac: string;
  created_at: number;
  /** When the number was erased, no wallet holding it any more (vault/erasure.ts); null until then. */
  erased_at: number | null;
}

/** Vault entries to erase once due, a card holding the number having been removed (vault/erasure.ts). */
export interface VaultErasuresTable {
  vault_id: string;
  due_at: number;
}

export interface NetworkTokensTable {
  vault_id: string;
  token_ciphertext: string;
  exp_month: number;
  exp_year: number;
  created_at: number;
}

export interface SessionsTable {
  id: string;
  merchant_id: string;
  shopper_id: string;
  created_at: number;
  expires_at: number;
  /** The card the shopper chose in the hosted checkout that made the session; null: any of the wallet's. */
  payment_id: string | null;
  /** The total, in cents, the shopper agreed to there; null: no limit beyond the API's. */
  amount_limit: number | null;
}

export interface CredentialsRequestsTable {
  id: string;
  merchant_id: string;
  session_id: string;
  payment_id: string;
  amount: number;
  currency: string;
  merchant_reference: string;
  webhook_message_id: string;
  created_at: number;
  /** The key ring id the cryptogram is derived under; null on requests from before it was kept. */
  cryptogram_key_id: string | null;
}

export interface ExternalResponsesTable {
  id: string;
  merchant_id: string;
  credentials_request_id: string;
  payment_id: string;
  amount: number;
  currency: string;
  psp_host_name: string;
  psp_raw_response_ciphertext: string;
  is_recurring: number;
  created_at: number;
}

export interface WebhookMessagesTable {
  id: string;
  merchant_id: string;
  event_name: string;
  /** Id of the domain record the payload is built from at delivery time (never card data). */
  subject_id: string;
  state: 'PENDING' | 'DELIVERED' | 'FAILED';
  /** Which retry schedule applies: `credentials` (short) or `default`. */
  schedule: 'credentials' | 'default';
  attempt_count: number;
  next_attempt_at: number;
  /** A dispatcher owns the message until this time; another may take it over after. */
  lease_until: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  id: string;
  message_id: string;
  attempted_at: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface IdempotencyKeysTable {
  merchant_id: string;
  key: string;
  fingerprint: string;
  response_status: number;
  response_body: string;
  created_at: number;
  expires_at: number;
}

/** Orders of the default checkout; shopper and payment columns stay null until the payment step. */
export interface OrdersTable {
  id: string;
  merchant_id: string;
  /** The merchant's own order id from `createOrder` (`orderId` there, `merchantOrderId` in the API). */
  merchant_order_id: string | null;
  /** The merchant page's origin the order was created from; the checkout page talks only to it. */
  origin: string;
  status: 'CREATED' | 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'ABANDONED';
  currency: string;
  /** JSON array of `{ SKU, name?, amount?, category? }`. */
  line_items: string;
  subtotal: number;
  total: number;
  description: string | null;
  email: string | null;
  shopper_id: string | null;
  payment_id: string | null;
  shipping_address_id: string | null;
  billing_address_id: string | null;
  /** JSON `{ externalId, name, price }`. */
  shipping_method: string | null;
  shipping_amount: number | null;
  tax_amount: number | null;
  charged_amount: number | null;
  /** Key-ring envelope of the transaction details JSON (associated data: the order id). */
  transaction_details_ciphertext: string | null;
  error_code: string | null;
  error_message: string | null;
  /** Merchant authorization mode: the payment-carousel session handed over with the selection. */
  session_id: string | null;
  /** JSON summary of the merchant's `POST /payments/externalresponse` for this order's payment. */
  external_response: string | null;
  expires_at: number;
  created_at: number;
  updated_at: number;
}

/** One live one-time code per order and email; a new request for the same pair replaces it. */
export interface OneTimeCodesTable {
  order_id: string;
  email_normalized: string;
  /** HMAC-SHA-256 of email, order and code under a key derived from the key ring; never the code. */
  code_hash: string;
  /** Tries so far, right or wrong; the code is dead at 5. */
  attempts: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** When a code was last sent to an email, for the resend throttle. */
export interface OneTimeCodeSendsTable {
  email_normalized: string;
  last_sent_at: number;
}

/** Bearer tokens of the hosted checkout; `shopper_id` is null while a new shopper enrols. */
export interface ShopperTokensTable {
  /** SHA-256 of the token, hex. */
  token_hash: string;
  order_id: string;
  email: string;
  shopper_id: string | null;
  /** What signed the shopper in: a one-time `code`, or a remembered `device`. */
  proof: Generated<SignInProof>;
  created_at: number;
  expires_at: number;
}

export type SignInProof = 'code' | 'device';

/** "Remember me on this device": a device token that signs its shopper in without a one-time code. */
export interface RememberedDevicesTable {
  /** SHA-256 of the device token, hex. */
  token_hash: string;
  shopper_id: string;
  /** Where the device was remembered, and signs its shopper in; null: before 022, anywhere. */
  merchant_id: string | null;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
}

/** An e-mail to a shopper waiting to be sent, or sent again (owned by `shopper-auth/`, see notices.ts). */
export interface ShopperNoticesTable {
  id: string;
  shopper_id: string;
  /** The address it goes to, as the shopper typed it. */
  email: string;
  kind: ShopperNoticeKind;
  /** JSON of what the message is composed from (for `device_remembered`: shop, when, until when). */
  details: string;
  created_at: number;
  /** Attempts made so far; a failed attempt waits its turn in the retry schedule. */
  attempts: number;
  /** When the next attempt is due; while one is under way, when its lease runs out. */
  next_attempt_at: number;
  /** Why the last attempt failed, without the address. */
  last_error: string | null;
}

export type ShopperNoticeKind = 'device_remembered';

/** Staging only: messages to shoppers kept for `GET /sandbox/messages` instead of being delivered. */
export interface SandboxMessagesTable {
  id: string;
  recipient: string;
  recipient_normalized: string;
  subject: string;
  body: string;
  sent_at: number;
}

/** A merchant's account at its payment gateway (owned by `gateways/`). */
export interface GatewayAccountsTable {
  merchant_id: string;
  /** JSON of the gateway settings: `{ gateway, style, url, timeoutMs }` for the sandbox. */
  settings: string;
  /** Key-ring envelope of the credentials JSON `{ name: value }` (associated data: the merchant id). */
  credentials_ciphertext: string;
  created_at: number;
  updated_at: number;
}

/** A new shopper's enrolment waiting for the one-time code (owned by `checkout/`); never the CVV. */
export interface PendingEnrolmentsTable {
  id: string;
  order_id: string;
  email_normalized: string;
  /** Key-ring envelope of the enrolment JSON, card number included (associated data: the row's id). */
  details_ciphertext: string;
  created_at: number;
  expires_at: number;
}

/** A fixed window of a rate limit, shared by every process (`rate-limits.ts`). */
export interface RateLimitWindowsTable {
  key: string;
  count: number;
  ends_at: number;
}

/** One action on the service's accounts, secrets and data (owned by `audit/`), chained by hash. */
export interface AuditEventsTable {
  seq: number;
  at: number;
  /** `operator:<name>@<host>`, `merchant:<id>` or `service`. */
  actor: string;
  action: string;
  merchant_id: string | null;
  /** The key, shopper or message acted on, when not the merchant itself. */
  subject: string | null;
  /** JSON object; never a secret or card data. */
  details: string;
  prev_hash: string;
  /** SHA-256 of `prev_hash` and the event's fields (audit/chain.ts). */
  hash: string;
}

/** The audit chain's head: the last event's `seq` and `hash`; one row, id 1. */
export interface AuditHeadTable {
  id: number;
  seq: number;
  hash: string;
  /** The last event copied into the service's log; 0 for none. */
  logged_seq: Generated<number>;
}

export interface Database {
  merchants: MerchantsTable;
  api_keys: ApiKeysTable;
  webhook_secrets: WebhookSecretsTable;
  shoppers: ShoppersTable;
  addresses: AddressesTable;
  cards: CardsTable;
  stored_credentials: StoredCredentialsTable;
  vault_cards: VaultCardsTable;
  vault_erasures: VaultErasuresTable;
  network_tokens: NetworkTokensTable;
  sessions: SessionsTable;
  credentials_requests: CredentialsRequestsTable;
  external_responses: ExternalResponsesTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
  orders: OrdersTable;
  one_time_codes: OneTimeCodesTable;
  one_time_code_sends: OneTimeCodeSendsTable;
  rate_limit_windows: RateLimitWindowsTable;
  shopper_tokens: ShopperTokensTable;
  remembered_devices: RememberedDevicesTable;
  sandbox_messages: SandboxMessagesTable;
  shopper_notices: ShopperNoticesTable;
  gateway_accounts: GatewayAccountsTable;
  pending_enrolments: PendingEnrolmentsTable;
  audit_events: AuditEventsTable;
  audit_head: AuditHeadTable;
}
