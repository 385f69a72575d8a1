export { isErased } from './repo.js';
export {
  type AddressChanges,
  addressEdits,
  type CardChanges,
  type ChangedBy,
  MAX_ADDRESSES,
  MAX_CARDS,
  type NewAddress,
  type NewCard,
  type NewShopper,
  Wallet,
} from './service.js';
export { Sessions } from './sessions.js';
export type { Address, Card, Session, Shopper } from './types.js';
