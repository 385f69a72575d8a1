/**
 * A time-out leaves a payment's outcome unknown: the gateway may have authorized and its answer been
 * lost on the way. Reporting `-1` then would fail an order the shopper may have paid for, so a
 * connector whose gateway replays a repeated idempotency key is asked once more with the same request
 * and key: the gateway answers what it decided the first time, or decides now, and never charges twice.
 * When that ask fails too, the outcome is still unknown: the error is `undecided`, and the payment step
 * keeps the order under way to ask again later.
 */
import { GatewayError } from './errors.js';
import type { GatewayConnector } from './gateway.js';

/**
 * The connector, retrying an authorization once after a time-out when its gateway replays answers; a
 * failed retry is `undecided`.
 */
export function retryingOnTimeout(connector: GatewayConnector): GatewayConnector {
  if (!connector.supports.idempotentReplay) return connector;
  return {
    name: connector.name,
    supports: connector.supports,
    ...(connector.lookup && { lookup: connector.lookup }),
    async authorize(request, credentials) {
      try {
        return await connector.authorize(request, credentials);
      } catch (error) {
        if (!(error instanceof GatewayError) || error.kind !== 'timeout') throw error;
      }
      try {
        return await connector.authorize(request, credentials);
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        throw new GatewayError(
          'undecided',
          `${error.message} (on the retry with the same idempotency key, after a first time-out)`,
          { cause: error, ...(error.statusCode === undefined ? {} : { statusCode: error.statusCode }) },
        );
      }
    },
  };
}
