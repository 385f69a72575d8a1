/** The public face of webhooks; see README.md in this folder. */
export {
  type AttemptOutcome,
  type AttemptSender,
  Dispatcher,
  type DispatcherOptions,
  type DispatcherStop,
  type MessageForPayload,
  type WebhookEndpoint,
} from './dispatcher.js';
export {
  insertMessages,
  type NewMessage,
  newMessage,
  type RetrySchedule,
  type WebhookMessageRow,
} from './outbox.js';
export type { AttemptRecord, Backlog, ListFilter, MessageSummary, MessageWithAttempts } from './repo.js';
export { CONNECTIONS_PER_ORIGIN } from './sender.js';
export { RECOVER_BATCH, Webhooks, type WebhooksOptions } from './service.js';
export { SpreadSender } from './spread-sender.js';
export { MESSAGE_STATES, type MessageState, MessageTransitionError } from './state.js';
export { TESTS_PER_MINUTE, WEBHOOK_TEST, WebhookTester, type WebhookTestResult } from './tester.js';
export {
  anAddress,
  checkWebhookUrl,
  configuredDestinations,
  parseNetwork,
  WebhookDestinations,
} from './url-guard.js';
export { NOTIFY_CHANNEL, WakeUps } from './wake-ups.js';
export { type DeliveryWorkerData, WorkerSender, type WorkerSenderOptions } from './worker-sender.js';
