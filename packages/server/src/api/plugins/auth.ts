import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { UnauthorizedError } from '../../errors.js';
import { API_KEY_PREFIXES } from '../../merchants/index.js';
import type { Merchant } from '../../merchants/types.js';

declare module 'fastify' {
  interface FastifyRequest {
    merchant: Merchant | undefined;
  }
  interface FastifyContextConfig {
    /** `merchant`: the route needs `Authorization: Bearer <apiKey>`. */
    auth?: 'merchant';
  }
}

export interface Authenticator {
  authenticate(apiKey: string): Promise<Merchant | undefined>;
}

const BEARER = /^Bearer ([A-Za-z0-9_]{1,200})$/i;

/** A refused key's first characters, as `apikey list` shows them (`sk_test_Ab3x`): never enough to use. */
const SHOWN_PREFIX_LENGTH = 12;

/** 20 a second: a flood of bad keys costs the log a few lines a second, each saying how many it left out. */
const REFUSALS_LOGGED_PER_SECOND = 20;

/** Which refusals are logged: at most REFUSALS_LOGGED_PER_SECOND each second, in this process. */
export class RefusalLog {
  #second = 0;
  #logged = 0;
  #unlogged = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Undefined when this refusal goes unlogged; else how many went unlogged since the last one logged. */
  take(): number | undefined {
    const second = Math.floor(this.now() / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#logged = 0;
    }
    if (this.#logged >= REFUSALS_LOGGED_PER_SECOND) {
      this.#unlogged++;
      return undefined;
    }
    this.#logged++;
    const unlogged = this.#unlogged;
    this.#unlogged = 0;
    return unlogged;
  }
}

function shownPrefix(key: string): string | undefined {
  const ours = Object.values(API_KEY_PREFIXES).some((prefix) => key.startsWith(prefix));
  return ours ? key.slice(0, SHOWN_PREFIX_LENGTH) : undefined;
}

/** The authenticated merchant of a route declared with `config: { auth: 'merchant' }`. */
export function merchantOf(request: FastifyRequest): Merchant {
  if (!request.merchant) throw new UnauthorizedError();
  return request.merchant;
}

export const authPlugin = fp(async (app: FastifyInstance, options: { merchants: Authenticator }) => {
  app.decorateRequest('merchant', undefined);
  const refusals = new RefusalLog();
  /**
   * A refused request is logged (PCI DSS asks for invalid access attempts), with the key's first
   * characters when it has our shape, so that an operator can tell a merchant which old key still calls.
   */
  const refuse = (request: FastifyRequest, reason: string, message: string, key?: string) => {
    const unlogged = refusals.take();
    if (unlogged !== undefined) {
      const attempt = { ip: request.ip, method: request.method, route: request.routeOptions.url };
      const keyPrefix = key === undefined ? undefined : shownPrefix(key);
      request.log.warn(
        { ...attempt, reason, keyPrefix, unloggedBefore: unlogged > 0 ? unlogged : undefined },
        'refused a merchant API request for its API key',
      );
    }
    return new UnauthorizedError(message);
  };
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.auth !== 'merchant') return;
    const header = request.headers.authorization;
    if (!header) {
      throw refuse(
        request,
        'no Authorization header',
        'The Authorization header is missing; send "Bearer <apiKey>".',
      );
    }
    const match = BEARER.exec(header);
    if (!match?.[1]) {
      throw refuse(request, 'not a Bearer key', 'The Authorization header must be "Bearer <apiKey>".');
    }
    const merchant = await options.merchants.authenticate(match[1]);
    if (!merchant)
      throw refuse(request, 'unknown or revoked key', 'The API key is unknown or revoked.', match[1]);
    request.merchant = merchant;
  });
});
