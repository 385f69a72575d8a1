/**
 * The one suite every gateway connector passes, run from each connector's test against a live
 * instance of its gateway (a local server or the gateway's own sandbox). It holds the promises checkout
 * relies on: the staging test cards give the interface's codes, network tokens authorize, a retried
 * request never charges twice, no answer in time is `-1`, and the ids handed to merchants are copies
 * of values inside the raw response they also receive.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS, type TestCard } from '../sandbox/seed.js';
import { Secret } from '../secret.js';
import { sandboxTokenNumber } from '../vault/sandbox-token-service.js';
import { GatewayError, type SdkResult, sdkResult } from './errors.js';
import type {
  AuthorizationRequest,
  CardSource,
  GatewayConnector,
  GatewayCredentials,
  GatewayResult,
  NetworkTokenSource,
} from './gateway.js';

export interface ConformanceTarget {
  /** The connector under test, for a gateway at `endpoint.url` and giving up after `endpoint.timeoutMs`. */
  connect(endpoint: { url: string; timeoutMs: number }): GatewayConnector;
  /** Where the gateway under test listens; called once the caller's `beforeAll` has run. */
  url(): string;
  credentials: GatewayCredentials;
  /** How the connector hands back the gateway's answer: parsed (JSON gateways) or as text (XML). */
  rawResponse: 'object' | 'string';
}

/** 10 s: far above a local gateway's answer, so only the time-out test ever times out. */
const TIMEOUT_MS = 10_000;
/** 200 ms: short enough for a quick test, long enough that a busy machine still connects first. */
const SHORT_TIMEOUT_MS = 200;

const EXPECTED: Record<TestCard['outcome'], SdkResult> = {
  approved: { kind: 'success' },
  '995': { kind: 'error', errorCode: '995', errorMessage: 'Unable to process card' },
  '990': { kind: 'error', errorCode: '990', errorMessage: 'Card was declined' },
  '-1': { kind: 'error', errorCode: '-1', errorMessage: null },
};

const BILLING_ADDRESS = {
  firstName: 'Taylor',
  lastName: 'Shopper',
  address1: '100 Congress Ave',
  address2: null,
  city: 'Austin',
  state: 'TX',
  zip: '78701',
  country: 'US',
  phoneNumber: '+15125550100',
};

const EXP_YEAR = new Date().getUTCFullYear() + 3;

/** A card source for `pan`, as checkout sends it (exported for the other gateway tests). */
export function card(pan: string): CardSource {
  return { type: 'card', pan: new Secret(pan), expMonth: 12, expYear: EXP_YEAR, cvv: new Secret('123') };
}

/** A network token for the card, as the sandbox token service provisions it, with a fresh cryptogram. */
function networkToken(testCard: TestCard): NetworkTokenSource {
  return {
    type: 'network_token',
    token: new Secret(sandboxTokenNumber(testCard.pan, testCard.brand)),
    cryptogram: new Secret(randomBytes(20).toString('base64')),
    expMonth: 6,
    expYear: EXP_YEAR,
  };
}

/** An authorization of $19.99 from `source`, with a fresh order reference and idempotency key. */
export function authorization(
  source: AuthorizationRequest['source'],
  overrides: Partial<AuthorizationRequest> = {},
): AuthorizationRequest {
  return {
    amount: 1999,
    currency: 'USD',
    orderReference: `ord_conformance_${randomUUID()}`,
    source,
    billingAddress: BILLING_ADDRESS,
    storedCredential: { kind: 'initial', initiator: 'cardholder' },
    variant: 'standard',
    idempotencyKey: randomUUID(),
    ...overrides,
  };
}

/** Whether `value` appears in the raw response: as a string leaf of an object, or in the text. */
function appearsIn(raw: unknown, value: string): boolean {
  if (typeof raw === 'string') return raw.includes(value);
  if (typeof raw !== 'object' || raw === null) return false;
  return Object.values(raw).some((inner) => inner === value || appearsIn(inner, value));
}

function expectCopiesOfRawResponse(
  result: GatewayResult,
  request: AuthorizationRequest,
  kind: ConformanceTarget['rawResponse'],
): void {
  if (kind === 'object') expect(result.rawResponse).toBeTypeOf('object');
  else expect(result.rawResponse).toBeTypeOf('string');
  expect(result.rawResponse).not.toBeNull();
  expect(result.gatewayTransactionId).not.toBe('');
  expect(appearsIn(result.rawResponse, result.gatewayTransactionId)).toBe(true);
  expect(appearsIn(result.rawResponse, request.orderReference)).toBe(true);
  if (result.networkTransactionId !== null) {
    expect(appearsIn(result.rawResponse, result.networkTransactionId)).toBe(true);
  }
  if (result.stpReferenceNum !== undefined) {
    expect(appearsIn(result.rawResponse, result.stpReferenceNum)).toBe(true);
  }
}

/** The error an authorization rejects with; fails the test when it resolves instead. */
async function failureOf(pending: Promise<GatewayResult>): Promise<GatewayError> {
  const error = await pending.then(
    (result) => new Error(`expected a GatewayError, got outcome ${result.outcome}`),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** Local stand-ins for a gateway gone wrong: one that never answers, one that answers nonsense. */
class BrokenGateways {
  readonly #silent = net.createServer((socket) => this.#sockets.add(socket));
  readonly #sockets = new Set<net.Socket>();
  readonly #nonsense = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<html><body>502 Bad Gateway</body></html>');
  });

  async start(): Promise<void> {
    await Promise.all(
      [this.#silent, this.#nonsense].map(
        (server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
      ),
    );
  }

  silentUrl(): string {
    return `http://127.0.0.1:${(this.#silent.address() as AddressInfo).port}`;
  }

  nonsenseUrl(): string {
    return `http://127.0.0.1:${(this.#nonsense.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    this.#nonsense.closeAllConnections();
    await Promise.all(
      [this.#silent, this.#nonsense].map((server) => new Promise((resolve) => server.close(resolve))),
    );
  }
}

/** A port nothing listens on: bound, noted and released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export function describeGatewayConformance(name: string, target: ConformanceTarget): void {
  describe(`${name} gateway conformance`, () => {
    const connector = () => target.connect({ url: target.url(), timeoutMs: TIMEOUT_MS });
    const authorize = (request: AuthorizationRequest) => connector().authorize(request, target.credentials);

    it.each(TEST_CARDS)('card ending $last4 gives $outcome', async (testCard) => {
      const request = authorization(card(testCard.pan));
      const result = await authorize(request);
      expect(sdkResult(result.outcome)).toEqual(EXPECTED[testCard.outcome]);
      expectCopiesOfRawResponse(result, request, target.rawResponse);
      if (testCard.outcome === 'approved') expect(result.networkTransactionId).toMatch(/^\w+$/);
      if (testCard.outcome === '-1') expect(result.networkTransactionId).toBeNull();
    });

    it.each(TEST_CARDS)('network token for the card ending $last4 gives $outcome too', async (testCard) => {
      const request = authorization(networkToken(testCard));
      if (!connector().supports.networkTokens) {
        expect((await failureOf(authorize(request))).kind).toBe('unsupported');
        return;
      }
      const result = await authorize(request);
      expect(sdkResult(result.outcome)).toEqual(EXPECTED[testCard.outcome]);
      expectCopiesOfRawResponse(result, request, target.rawResponse);
    });

    it.each([
      ['a card', () => card('4111111111111111')],
      ['a network token', () => networkToken(TEST_CARDS[0] as TestCard)],
    ])('never charges twice for one idempotency key, with %s', async (_label, source) => {
      const request = authorization(source());
      if (request.source.type === 'network_token' && !connector().supports.networkTokens) return;
      const first = await authorize(request);
      const retried = await authorize(request);
      expect(first.outcome).toBe('approved');
      expect(retried.gatewayTransactionId).toBe(first.gatewayTransactionId);
      expect(retried.networkTransactionId).toBe(first.networkTransactionId);
      expect(retried.rawResponse).toEqual(first.rawResponse);
      const another = await authorize({ ...request, source: source(), idempotencyKey: randomUUID() });
      expect(another.gatewayTransactionId).not.toBe(first.gatewayTransactionId);
    });

    it('looks up the decision made for an idempotency key, and finds none for a key never used', async () => {
      const { lookup } = connector();
      if (!lookup) {
        // Without look-ups, a payment whose answer was lost can only be settled by sending it again.
        expect(connector().supports.idempotentReplay).toBe(true);
        return;
      }
      const request = authorization(card('4111111111111111'));
      expect(await lookup(request.idempotencyKey, target.credentials)).toBeUndefined();
      const decided = await authorize(request);
      const found = await lookup(request.idempotencyKey, target.credentials);
      expect(found?.gatewayTransactionId).toBe(decided.gatewayTransactionId);
      expect(found?.rawResponse).toEqual(decided.rawResponse);
    });

    it('gives connected merchants an stpReferenceNum from the raw response, and others none', async () => {
      const standard = await authorize(authorization(card('4111111111111111')));
      expect(standard.stpReferenceNum).toBeUndefined();
      const request = authorization(card('4111111111111111'), { variant: 'connected' });
      if (!connector().supports.connectedVariant) {
        expect((await failureOf(authorize(request))).kind).toBe('unsupported');
        return;
      }
      const connected = await authorize(request);
      expect(connected.stpReferenceNum).toMatch(/\S/);
      expectCopiesOfRawResponse(connected, request, target.rawResponse);
    });

    it('authorizes a later payment on a stored card, naming the first', async () => {
      const first = await authorize(authorization(card('5555555555554444')));
      const previousNetworkTransactionId = first.networkTransactionId ?? undefined;
      expect(previousNetworkTransactionId).toBeDefined();
      for (const initiator of ['cardholder', 'merchant'] as const) {
        const later = await authorize(
          authorization(card('5555555555554444'), {
            storedCredential: { kind: 'subsequent', initiator, previousNetworkTransactionId },
          }),
        );
        expect(later.outcome).toBe('approved');
      }
    });

    describe('when the gateway fails to answer', () => {
      const broken = new BrokenGateways();
      beforeAll(() => broken.start());
      afterAll(() => broken.stop());

      it('turns a time-out into -1, on time', async () => {
        const started = performance.now();
        const slow = target.connect({ url: broken.silentUrl(), timeoutMs: SHORT_TIMEOUT_MS });
        const error = await failureOf(
          slow.authorize(authorization(card('4111111111111111')), target.credentials),
        );
        expect(error.kind).toBe('timeout');
        expect(sdkResult(error)).toEqual(EXPECTED['-1']);
        // 2 s (10×): generous for a loaded machine, yet it fails a connector that ignores its time-out.
        expect(performance.now() - started).toBeLessThan(SHORT_TIMEOUT_MS * 10);
      });

      it('turns a refused connection into -1', async () => {
        const gone = target.connect({ url: `http://127.0.0.1:${await closedPort()}`, timeoutMs: TIMEOUT_MS });
        const error = await failureOf(
          gone.authorize(authorization(card('4111111111111111')), target.credentials),
        );
        expect(error.kind).toBe('network');
        expect(sdkResult(error)).toEqual(EXPECTED['-1']);
      });

      it('turns an unreadable answer into -1', async () => {
        const confused = target.connect({ url: broken.nonsenseUrl(), timeoutMs: TIMEOUT_MS });
        const error = await failureOf(
          confused.authorize(authorization(card('4111111111111111')), target.credentials),
        );
        expect(sdkResult(error)).toEqual(EXPECTED['-1']);
      });
    });
  });
}
