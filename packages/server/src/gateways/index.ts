/** Payment gateways: the connector interface, the registry and merchants' gateway accounts. */
export {
  DEFAULT_SANDBOX_TIMEOUT_MS,
  type GatewayAccount,
  GatewayAccounts,
  type GatewayAccountsOptions,
  type MerchantGateway,
} from './accounts.js';
export { GatewayError, type GatewayErrorKind, type SdkResult, sdkResult } from './errors.js';
export type * from './gateway.js';
export {
  connectorFor,
  GATEWAY_NAMES,
  type GatewaySettings,
  MAX_GATEWAY_TIMEOUT_MS,
  parseGatewaySettings,
} from './registry.js';
