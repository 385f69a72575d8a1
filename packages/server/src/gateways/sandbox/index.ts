/**
 * The sandbox gateway connector: one HTTP POST per authorization to the sandbox gateway server
 * (packages/sandbox-gateway), in the JSON or XML style the merchant's settings name, within a time-out.
 */
import { request as httpRequest } from 'undici';
import { GatewayError } from '../errors.js';
import {
  type AuthorizationRequest,
  assertSupported,
  type GatewayConnector,
  type GatewayCredentials,
  type GatewayResult,
} from '../gateway.js';
import { fromJsonResponse, fromXmlResponse, toJsonRequest, toXmlRequest } from './transformers.js';

export interface SandboxGatewaySettings {
  gateway: 'sandbox';
  /** `json`: the answer reaches merchants as an object; `xml`: as the document's text. */
  style: 'json' | 'xml';
  /** Base URL of the sandbox gateway server, such as `http://127.0.0.1:4010`. */
  url: string;
  /** Whole exchange, connection to last byte, in ms. */
  timeoutMs: number;
}

/** The sandbox gateway's error code for a look-up of a key no authorization was made with. */
const LOOKUP_FOUND_NONE = 'authorization_not_found';

const STYLES = {
  json: {
    path: 'v1/authorizations',
    lookupPath: 'v1/authorizations/by-idempotency-key/',
    contentType: 'application/json',
    body: (request: AuthorizationRequest) => JSON.stringify(toJsonRequest(request)),
    read: fromJsonResponse,
  },
  xml: {
    path: 'xml/authorizations',
    lookupPath: 'xml/authorizations/by-idempotency-key/',
    contentType: 'application/xml',
    body: toXmlRequest,
    read: fromXmlResponse,
  },
} as const;

function baseOf(settings: SandboxGatewaySettings): URL {
  let base: URL;
  try {
    // A trailing slash keeps any path prefix of the base URL when the style's path is added.
    base = new URL(settings.url.endsWith('/') ? settings.url : `${settings.url}/`);
  } catch (error) {
    throw new GatewayError('configuration', `sandbox gateway url is not a URL: ${settings.url}`, {
      cause: error,
    });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new GatewayError('configuration', `sandbox gateway url must be http or https: ${settings.url}`);
  }
  return base;
}

/**
 * Reads `credentials.apiKey`, sent as a bearer token. The sandbox accepts any key; it keeps one
 * merchant's idempotency keys apart from another's.
 */
export function sandboxConnector(settings: SandboxGatewaySettings): GatewayConnector {
  const style = STYLES[settings.style];
  if (!Number.isInteger(settings.timeoutMs) || settings.timeoutMs <= 0) {
    throw new GatewayError('configuration', 'sandbox gateway timeoutMs must be a positive integer (ms)');
  }
  const base = baseOf(settings);
  const endpoint = new URL(style.path, base);

  /** One exchange within the time-out; a GatewayError (`timeout` or `network`) when it does not finish. */
  const exchange = async (
    url: URL,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  ): Promise<{ statusCode: number; text: string }> => {
    const signal = AbortSignal.timeout(settings.timeoutMs);
    try {
      const response = await httpRequest(url, { ...init, signal });
      return { statusCode: response.statusCode, text: await response.body.text() };
    } catch (error) {
      // The signal fires for the whole exchange: connecting, waiting for the answer, reading it.
      const message = signal.aborted
        ? `sandbox gateway gave no answer within ${settings.timeoutMs} ms`
        : `sandbox gateway unreachable at ${url.origin}`;
      throw new GatewayError(signal.aborted ? 'timeout' : 'network', message, { cause: error });
    }
  };
  const apiKeyOf = (credentials: GatewayCredentials): string => {
    const apiKey = credentials.apiKey;
    if (!apiKey) throw new GatewayError('configuration', 'the sandbox gateway needs credentials.apiKey');
    return apiKey.reveal();
  };

  const connector: GatewayConnector = {
    name: 'sandbox',
    supports: { networkTokens: true, connectedVariant: true, idempotentReplay: true },

    async authorize(request: AuthorizationRequest, credentials: GatewayCredentials): Promise<GatewayResult> {
      assertSupported(connector, request);
      const { statusCode, text } = await exchange(endpoint, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKeyOf(credentials)}`,
          'content-type': style.contentType,
          accept: style.contentType,
          'idempotency-key': request.idempotencyKey,
        },
        body: style.body(request),
      });
      return style.read(statusCode, text);
    },

    async lookup(idempotencyKey: string, credentials: GatewayCredentials) {
      const url = new URL(`${style.lookupPath}${encodeURIComponent(idempotencyKey)}`, base);
      const { statusCode, text } = await exchange(url, {
        method: 'GET',
        headers: { authorization: `Bearer ${apiKeyOf(credentials)}`, accept: style.contentType },
      });
      try {
        return style.read(statusCode, text);
      } catch (error) {
        // Only the gateway's own "no authorization with this key" means nothing was charged: a 404 of a
        // proxy, or of a gateway without look-ups, says nothing of the kind.
        if (error instanceof GatewayError && error.gatewayCode === LOOKUP_FOUND_NONE) return undefined;
        throw error;
      }
    },
  };
  return connector;
}
