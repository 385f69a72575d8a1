/** Orders of the default checkout; see README.md in this folder. Other areas use this face, never the table. */
export { ORDER_EVENTS, type OrderEventPayload, OrderPayloadBuilder } from './payload.js';
export {
  countShopperOrders,
  deleteAbandonedOrders,
  type ExternalResponseTarget,
  linkExternalResponse,
  orderRecords,
} from './repo.js';
export {
  DEFAULT_ORDER_LIFETIME_MS,
  ORDER_FAILED,
  ORDER_SUCCEEDED,
  Orders,
  type OrdersDeps,
} from './service.js';
export { type OrderEvent, OrderTransitionError, transition } from './state.js';
export * from './types.js';
export { MAX_CENTS, validateOrder } from './validation.js';
export { type OrderView, toOrderView } from './view.js';
