import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../secret.js';
import { GatewayError, gatewayText, sdkResult } from './errors.js';
import type { AuthorizationRequest } from './gateway.js';
import { sandboxConnector } from './sandbox/index.js';

describe('sdkResult', () => {
  it('gives the interface’s codes and messages exactly (section 7.2)', () => {
    expect(sdkResult('approved')).toEqual({ kind: 'success' });
    expect(sdkResult('invalid_card')).toEqual({
      kind: 'error',
      errorCode: '990',
      errorMessage: 'Card was declined',
    });
    expect(sdkResult('declined')).toEqual({
      kind: 'error',
      errorCode: '995',
      errorMessage: 'Unable to process card',
    });
    expect(sdkResult('error')).toEqual({ kind: 'error', errorCode: '-1', errorMessage: null });
  });

  it.each([
    'timeout',
    'network',
    'rejected_request',
    'unexpected_response',
    'unsupported',
    'configuration',
  ] as const)('reports a %s gateway error as -1 with a null message', (kind) => {
    expect(sdkResult(new GatewayError(kind, 'detail for the log'))).toEqual({
      kind: 'error',
      errorCode: '-1',
      errorMessage: null,
    });
  });
});

describe('gatewayText', () => {
  it('scrubs what a gateway echoed and keeps its words', () => {
    expect(gatewayText('cannot parse {"number":"4111111111111111","cvv":"987","amount":2599}')).toBe(
      'cannot parse {"number":"[card-number]","cvv":"[redacted]","amount":2599}',
    );
  });

  it('cuts long text to 200 characters, marked, after one space for each run of whitespace', () => {
    const text = gatewayText(`cannot\n\n  parse ${'x'.repeat(10_000)}`);
    expect(text).toBe(`cannot parse ${'x'.repeat(200 - 'cannot parse '.length)}…`);
  });

  it('shows what is not text as JSON, scrubbed', () => {
    expect(gatewayText({ cvv: '987', code: 'invalid_request' })).toBe(
      '{"cvv":"[redacted]","code":"invalid_request"}',
    );
    expect(gatewayText(undefined)).toBe('undefined');
  });
});

interface EchoingGateway {
  url: string;
  /** The request bodies the gateway received, in order. */
  bodies: string[];
  close(): Promise<void>;
}

function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * A gateway that refuses every authorization with 422 and echoes the request in its error message, in
 * the style it was sent: the whole JSON body, as the review found a misconfigured gateway doing, or the
 * XML document's card or network token element (the whole document would not fit in what we keep).
 */
async function startEchoingGateway(): Promise<EchoingGateway> {
  const bodies: string[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      bodies.push(body);
      if (request.headers['content-type'] === 'application/xml') {
        const element = /<(Card|NetworkToken)>[\s\S]*<\/\1>/.exec(body)?.[0];
        const message = `cannot parse request ${element}`;
        response.writeHead(422, { 'content-type': 'application/xml' });
        response.end(
          `<?xml version="1.0" encoding="UTF-8"?><ErrorResponse><Code>invalid_request</Code><Message>${escapeXml(message)}</Message></ErrorResponse>`,
        );
      } else {
        const message = `cannot parse request ${body}`;
        response.writeHead(422, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'invalid_request', message } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const PAN = '4111111111111111';
const CVV = '987';
const TOKEN = '4895370012003478';
const CRYPTOGRAM = 'rAwv4EKolFpod9ltYoJkEt2pPF8=';

/** A short request, so that the secrets sit inside the 200 characters of the message that are kept. */
function request(source: AuthorizationRequest['source']): AuthorizationRequest {
  return {
    amount: 2599,
    currency: 'USD',
    orderReference: 'ord_echo',
    source,
    billingAddress: {
      firstName: 'Taylor',
      lastName: 'Shopper',
      address1: '100 Congress Ave',
      address2: null,
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      country: 'US',
      phoneNumber: null,
    },
    storedCredential: { kind: 'initial', initiator: 'cardholder' },
    variant: 'standard',
    idempotencyKey: 'ord_echo',
  };
}

describe.each(['json', 'xml'] as const)(
  'a gateway that echoes the request in its error, %s style',
  (style) => {
    let gateway: EchoingGateway;
    beforeAll(async () => {
      gateway = await startEchoingGateway();
    });
    afterAll(() => gateway.close());

    it.each([
      [
        'card number and CVV',
        { type: 'card', pan: new Secret(PAN), expMonth: 12, expYear: 2030, cvv: new Secret(CVV) },
        [PAN, CVV],
      ],
      [
        'network token and cryptogram',
        {
          type: 'network_token',
          token: new Secret(TOKEN),
          cryptogram: new Secret(CRYPTOGRAM),
          expMonth: 12,
          expYear: 2030,
        },
        [TOKEN, CRYPTOGRAM],
      ],
    ] as const)('keeps the %s out of the error', async (_label, source, secrets) => {
      const connector = sandboxConnector({ gateway: 'sandbox', style, url: gateway.url, timeoutMs: 5_000 });
      const error: unknown = await connector
        .authorize(request(source), { apiKey: new Secret('sk_sandbox_echo') })
        .catch((thrown: unknown) => thrown);

      // The gateway did get the secrets, and sent them back.
      for (const secret of secrets) expect(gateway.bodies.at(-1)).toContain(secret);
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ kind: 'rejected_request', statusCode: 422 });
      const { message } = error as GatewayError;
      expect(message).toMatch(
        /^sandbox gateway refused the request \(422, invalid_request: cannot parse request /,
      );
      expect(message).toContain('[redacted]');
      for (const secret of secrets) expect(message).not.toContain(secret);
    });
  },
);
