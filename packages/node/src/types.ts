/**
 * The merchant API's requests, resources and webhook bodies by name, each read from the types generated
 * from the service's OpenAPI document (openapi.ts), so that they cannot drift from what the service
 * sends and accepts.
 */
import type { paths, webhooks } from './openapi.js';

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Operation<P extends keyof paths, M extends 'get' | 'post' | 'patch'> = NonNullable<paths[P][M]>;
type ResponseOf<P extends keyof paths, M extends 'get' | 'post' | 'patch'> =
  Operation<P, M> extends {
    responses: { 200: infer Ok };
  }
    ? JsonOf<Ok>
    : never;
type RequestOf<P extends keyof paths, M extends 'post' | 'patch'> =
  Operation<P, M> extends {
    requestBody?: infer Body;
  }
    ? JsonOf<NonNullable<Body>>
    : never;
type QueryOf<P extends keyof paths, M extends 'get'> =
  Operation<P, M> extends {
    parameters: { query?: infer Query };
  }
    ? NonNullable<Query>
    : never;
type EventOf<E extends keyof webhooks> = JsonOf<NonNullable<webhooks[E]['post']>['requestBody']>;

/** `POST /payments/credentials`: ask for a card's credentials, delivered by PAYMENT_CREDENTIALS webhook. */
export type CredentialsRequestInput = RequestOf<'/payments/credentials', 'post'>;
/** The acknowledgement: `{ code: 200, message: "OK", requestId }`. */
export type Acknowledgement = ResponseOf<'/payments/credentials', 'post'>;
/** `POST /payments/externalresponse`: your processor's answer, reported as received. */
export type ExternalResponseInput = RequestOf<'/payments/externalresponse', 'post'>;
/** Its acknowledgement: `{ code: 200, message: "OK", externalResponseId, requestId }`. */
export type ExternalResponseAcknowledgement = ResponseOf<'/payments/externalresponse', 'post'>;
/** A credentials request, its state and delivery attempts (never card data). */
export type CredentialsRequest = ResponseOf<'/payments/credentials/{requestId}', 'get'>;
/**
 * Filters of `GET /payments/credentials` as a list; `startingAfter` is managed by
 * `payments.listCredentialsRequests`'s paging, and `merchantReference` is `findCredentialsRequests`'s.
 */
export type CredentialsRequestListQuery = Omit<
  QueryOf<'/payments/credentials', 'get'>,
  'startingAfter' | 'merchantReference'
>;

export type Order = ResponseOf<'/orders/{orderId}', 'get'>;
export type OrderStatus = Order['status'];
/** Filters of `GET /orders`; `startingAfter` is managed by `orders.list`'s paging. */
export type OrderListQuery = Omit<QueryOf<'/orders', 'get'>, 'startingAfter'>;

export type WebhookMessage = ResponseOf<'/webhooks/messages/{messageId}', 'get'>;
export type WebhookMessageListQuery = Omit<QueryOf<'/webhooks/messages', 'get'>, 'startingAfter'>;
export type WebhookMessageSummary = ResponseOf<'/webhooks/messages/{messageId}/resend', 'post'>;
export type RecoverInput = RequestOf<'/webhooks/messages/recover', 'post'>;
export type RecoverResult = ResponseOf<'/webhooks/messages/recover', 'post'>;
export type WebhookTestResult = ResponseOf<'/webhooks/test', 'post'>;

export type AuditEvent = ResponseOf<'/audit-events', 'get'>['data'][number];
export type AuditEventListQuery = Omit<QueryOf<'/audit-events', 'get'>, 'startingAfter'>;

export type Account = ResponseOf<'/account', 'get'>;
export type AccountUpdate = RequestOf<'/account', 'patch'>;
export type WebhookSecretRotation = RequestOf<'/account/webhook-secret/rotate', 'post'>;
export type RotatedWebhookSecret = ResponseOf<'/account/webhook-secret/rotate', 'post'>;

export type SandboxSessionInput = RequestOf<'/sandbox/sessions', 'post'>;
export type SandboxSession = ResponseOf<'/sandbox/sessions', 'post'>;

export type PaymentCredentialsEvent = EventOf<'PAYMENT_CREDENTIALS'>;
/** ORDER_SUCCEEDED and ORDER_FAILED: the order as `GET /orders/{orderId}` returns it, with the event's name. */
export type OrderEvent = EventOf<'ORDER_SUCCEEDED'>;
export type WebhookTestEvent = EventOf<'WEBHOOK_TEST'>;
/** Every webhook the service sends; `eventName` tells them apart. */
export type WebhookEvent = PaymentCredentialsEvent | OrderEvent | WebhookTestEvent;
