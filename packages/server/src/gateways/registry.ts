/**
 * From a merchant's gateway settings to a connector. Connectors are stateless and cheap: build one per
 * payment from the settings in force. Every connector handed out retries a timed-out authorization
 * once when its gateway replays idempotent requests (`retry.ts`), and production never gets the sandbox.
 */
import type { WalletEnv } from '../config.js';
import { GatewayError } from './errors.js';
import type { GatewayConnector } from './gateway.js';
import { retryingOnTimeout } from './retry.js';
import { type SandboxGatewaySettings, sandboxConnector } from './sandbox/index.js';

/** One member per gateway, told apart by `gateway`. */
export type GatewaySettings = SandboxGatewaySettings;

type ConnectorFactories = {
  [Name in GatewaySettings['gateway']]: (
    settings: Extract<GatewaySettings, { gateway: Name }>,
  ) => GatewayConnector;
};

const FACTORIES: ConnectorFactories = {
  sandbox: sandboxConnector,
};

export const GATEWAY_NAMES = Object.keys(FACTORIES) as readonly GatewaySettings['gateway'][];

/** Gateways that only pretend to charge: refused in production, whatever the settings say. */
const SANDBOX_GATEWAYS: readonly GatewaySettings['gateway'][] = ['sandbox'];

/**
 * The connector for `settings` in the environment `env`; throws a `configuration` GatewayError for a
 * sandbox gateway in production or for settings the connector cannot use.
 */
export function connectorFor(settings: GatewaySettings, env: WalletEnv): GatewayConnector {
  if (env === 'production' && SANDBOX_GATEWAYS.includes(settings.gateway)) {
    throw new GatewayError(
      'configuration',
      `production does not use the ${settings.gateway} gateway; give the merchant an account at a real gateway`,
    );
  }
  // TypeScript cannot tie FACTORIES[name] to the settings member of that name; the mapped type does.
  const factory = FACTORIES[settings.gateway] as (settings: GatewaySettings) => GatewayConnector;
  return retryingOnTimeout(factory(settings));
}

/** 2 min, as for WEBHOOK_TIMEOUT_MS: the shopper waits up to twice this (one retry after a time-out). */
export const MAX_GATEWAY_TIMEOUT_MS = 120_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks settings read from storage or configuration; throws a GatewayError naming what is wrong. */
export function parseGatewaySettings(value: unknown): GatewaySettings {
  if (!isObject(value)) throw new GatewayError('configuration', 'gateway settings must be an object');
  const { gateway, style, url, timeoutMs } = value;
  if (gateway !== 'sandbox') {
    throw new GatewayError('configuration', `gateway must be one of ${GATEWAY_NAMES.join(', ')}`);
  }
  if (style !== 'json' && style !== 'xml') {
    throw new GatewayError('configuration', 'style must be json or xml');
  }
  if (typeof url !== 'string') throw new GatewayError('configuration', 'url must be a string');
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < 1 ||
    timeoutMs > MAX_GATEWAY_TIMEOUT_MS
  ) {
    throw new GatewayError(
      'configuration',
      `timeoutMs must be a whole number of ms from 1 to ${MAX_GATEWAY_TIMEOUT_MS}`,
    );
  }
  return { gateway, style, url, timeoutMs };
}
