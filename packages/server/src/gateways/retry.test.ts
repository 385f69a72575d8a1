import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../secret.js';
import { startGatewayProxy } from '../test-support/gateway-proxy.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../test-support/sandbox-gateway.js';
import { authorization, card } from './conformance.js';
import { GatewayError } from './errors.js';
import type { AuthorizationRequest, GatewayConnector } from './gateway.js';
import { connectorFor } from './registry.js';
import { retryingOnTimeout } from './retry.js';

/** 300 ms: a local gateway answers in a few; a lost answer makes the connector give up after it. */
const TIMEOUT_MS = 300;

const authorizeCard = () => authorization(card('4111111111111111'));

const CREDENTIALS = { apiKey: new Secret('sk_sandbox_retry') };

/** The gateway transaction id inside an answer of either style. */
function transactionIdIn(body: string): string | undefined {
  return /"id":"(gtx_\w+)"/.exec(body)?.[1] ?? /<TransactionId>(gtx_\w+)<\/TransactionId>/.exec(body)?.[1];
}

describe.each(['json', 'xml'] as const)('a timed-out authorization over HTTP, %s style', (style) => {
  let gateway: SandboxGatewayServer;
  beforeAll(async () => {
    gateway = await startSandboxGateway();
  });
  afterAll(() => gateway.close());

  const connectorAt = (url: string) =>
    connectorFor({ gateway: 'sandbox', style, url, timeoutMs: TIMEOUT_MS }, 'staging');

  it('is retried once with the same idempotency key and gets the first decision, charged once', async () => {
    const proxy = await startGatewayProxy(gateway.url);
    proxy.loseNextAnswers(1);
    try {
      const request = authorizeCard();
      const result = await connectorAt(proxy.url).authorize(request, CREDENTIALS);

      expect(result.outcome).toBe('approved');
      expect(
        proxy.forwarded.map(({ idempotencyKey, replayed, delivered }) => ({
          idempotencyKey,
          replayed,
          delivered,
        })),
      ).toEqual([
        { idempotencyKey: request.idempotencyKey, replayed: false, delivered: false },
        { idempotencyKey: request.idempotencyKey, replayed: true, delivered: true },
      ]);
      const [lost] = proxy.forwarded;
      expect(result.gatewayTransactionId).toBe(transactionIdIn(lost?.body ?? ''));

      // The shopper submits again: the same key is answered, not charged, again.
      const again = await connectorAt(proxy.url).authorize(request, CREDENTIALS);
      expect(again.gatewayTransactionId).toBe(result.gatewayTransactionId);
      expect(proxy.forwarded.filter((answer) => !answer.replayed)).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('reports the payment undecided when the retry times out too, after two tries', async () => {
    const proxy = await startGatewayProxy(gateway.url);
    proxy.loseNextAnswers(2);
    try {
      const started = performance.now();
      const error = await connectorAt(proxy.url)
        .authorize(authorizeCard(), CREDENTIALS)
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({
        kind: 'undecided',
        message: `sandbox gateway gave no answer within ${TIMEOUT_MS} ms (on the retry with the same idempotency key, after a first time-out)`,
      });
      expect(proxy.forwarded).toHaveLength(2);
      expect(new Set(proxy.forwarded.map((answer) => answer.idempotencyKey)).size).toBe(1);
      // Two time-outs and no more: 10× leaves room for a loaded machine.
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS * 10);
    } finally {
      await proxy.close();
    }
  });
});

describe('retryingOnTimeout', () => {
  const failing = (errors: Error[], idempotentReplay: boolean) => {
    const calls: AuthorizationRequest[] = [];
    const connector: GatewayConnector = {
      name: 'stub',
      supports: { networkTokens: false, connectedVariant: false, idempotentReplay },
      authorize: (request) => {
        calls.push(request);
        return Promise.reject(errors[calls.length - 1] ?? new Error('no more answers'));
      },
    };
    return { connector: retryingOnTimeout(connector), calls };
  };

  it('does not retry a gateway that does not replay idempotent requests', async () => {
    const { connector, calls } = failing([new GatewayError('timeout', 'slow')], false);
    await expect(connector.authorize(authorizeCard(), {})).rejects.toMatchObject({
      kind: 'timeout',
      message: 'slow',
    });
    expect(calls).toHaveLength(1);
  });

  it.each(['network', 'rejected_request', 'unexpected_response', 'configuration'] as const)(
    'does not retry a %s error',
    async (kind) => {
      const { connector, calls } = failing([new GatewayError(kind, 'no')], true);
      await expect(connector.authorize(authorizeCard(), {})).rejects.toMatchObject({ kind });
      expect(calls).toHaveLength(1);
    },
  );

  it('retries with the very same request, and reports a failed retry as undecided', async () => {
    const { connector, calls } = failing(
      [
        new GatewayError('timeout', 'slow'),
        new GatewayError('rejected_request', 'in progress', { statusCode: 409 }),
      ],
      true,
    );
    await expect(connector.authorize(authorizeCard(), {})).rejects.toMatchObject({
      kind: 'undecided',
      statusCode: 409,
    });
    expect(calls).toHaveLength(2);
    expect(calls[1]).toBe(calls[0]);
  });
});
