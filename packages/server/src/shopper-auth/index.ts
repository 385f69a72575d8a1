/** The public face of shopper sign-in for the hosted checkout; see README.md in this folder. */

export { isEmail, normalizeEmail } from './codes.js';
export { OtpInvalidError, OtpThrottledError } from './errors.js';
export type { Message, MessageSender } from './messages.js';
export { SandboxMailbox, type SandboxMessage } from './sandbox-mailbox.js';
export { createSenders, type Senders } from './senders.js';
export {
  CODE_TTL_MS,
  CODES_PER_DAY,
  CODES_PER_DAY_PER_CLIENT,
  type CodeRequestResult,
  type DeviceGrant,
  type EnrolmentIdentity,
  FORGET_DEVICES_PATH,
  forgetSignIns,
  MAX_ATTEMPTS,
  pendingNotices,
  RESEND_GAP_MS,
  rememberedDevices,
  SHOPPER_TOKEN_TTL_MS,
  ShopperAuth,
  type ShopperAuthOptions,
  type ShopperDirectory,
  type ShopperIdentity,
  type ShopperTokenGrant,
  TEST_SHOPPER_CODE,
} from './service.js';
export { SmtpSender } from './smtp-sender.js';
