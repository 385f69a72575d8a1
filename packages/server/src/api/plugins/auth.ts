import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type Actor, merchantActor } from '../../audit/index.js';
import { UnauthorizedError } from '../../errors.js';
import { API_KEY_PREFIXES, type RefusedKey } from '../../merchants/index.js';
import type { Merchant } from '../../merchants/types.js';
import { headerCount } from './input.js';

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
  explainRefusal(apiKey: string): Promise<RefusedKey>;
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

/** The API key of a request the hook let through: it is the header's, already checked. */
export function apiKeyOf(request: FastifyRequest): string {
  return BEARER.exec(request.headers.authorization ?? '')?.[1] ?? '';
}

/** Who acts through a merchant route, for the audit trail: the merchant and which of its keys. */
export async function actorOf(
  request: FastifyRequest,
  keys: { apiKeyIdOf(apiKey: string): Promise<string | undefined> },
): Promise<Actor> {
  return merchantActor(merchantOf(request).id, await keys.apiKeyIdOf(apiKeyOf(request)));
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
  const refuse = async (
    request: FastifyRequest,
    message: string,
    refused: { reason: string } | { key: string },
  ): Promise<UnauthorizedError> => {
    const unlogged = refusals.take();
    if (unlogged !== undefined) {
      const attempt = { ip: request.ip, method: request.method, route: request.routeOptions.url };
      // A key is explained: another environment's, unknown, or revoked, naming its merchant to tell.
      const why =
        'key' in refused
          ? await options.merchants
              .explainRefusal(refused.key)
              .catch(() => ({ reason: 'unknown or revoked key (the database did not say which)' }))
          : refused;
      const keyPrefix = 'key' in refused ? shownPrefix(refused.key) : undefined;
      request.log.warn(
        { ...attempt, ...why, keyPrefix, unloggedBefore: unlogged > 0 ? unlogged : undefined },
        'refused a merchant API request for its API key',
      );
    }
    return new UnauthorizedError(message);
  };
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.auth !== 'merchant') return;
    const count = headerCount(request, 'authorization');
    if (count > 1) {
      throw await refuse(request, `The Authorization header must be sent once, not ${count} times.`, {
        reason: 'several Authorization headers',
      });
    }
    const header = request.headers.authorization;
    if (!header) {
      throw await refuse(request, 'The Authorization header is missing; send "Bearer <apiKey>".', {
        reason: 'no Authorization header',
      });
    }
    const match = BEARER.exec(header);
    if (!match?.[1]) {
      throw await refuse(request, 'The Authorization header must be "Bearer <apiKey>".', {
        reason: 'not a Bearer key',
      });
    }
    const merchant = await options.merchants.authenticate(match[1]);
    if (!merchant) throw await refuse(request, 'The API key is unknown or revoked.', { key: match[1] });
    request.merchant = merchant;
  });
});
