import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../secret.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../../test-support/sandbox-gateway.js';
import { describeGatewayConformance } from '../conformance.js';
import { GatewayError } from '../errors.js';
import type { AuthorizationRequest, GatewayOutcome } from '../gateway.js';
import { connectorFor, parseGatewaySettings } from '../registry.js';
import { sandboxConnector } from './index.js';
import {
  fromJsonResponse,
  fromXmlResponse,
  outcomeOf,
  SANDBOX_STATUSES,
  type SandboxStatus,
  toJsonRequest,
  toXmlRequest,
} from './transformers.js';

const CREDENTIALS = { apiKey: new Secret('sk_sandbox_conformance') };

describe.each(['json', 'xml'] as const)('sandbox connector, %s style', (style) => {
  let gateway: SandboxGatewayServer;
  beforeAll(async () => {
    gateway = await startSandboxGateway();
  });
  afterAll(() => gateway.close());

  describeGatewayConformance(`sandbox (${style})`, {
    connect: ({ url, timeoutMs }) => sandboxConnector({ gateway: 'sandbox', style, url, timeoutMs }),
    url: () => gateway.url,
    credentials: CREDENTIALS,
    rawResponse: style === 'json' ? 'object' : 'string',
  });

  it('is what the registry builds from the merchant’s settings', () => {
    const settings = parseGatewaySettings({ gateway: 'sandbox', style, url: gateway.url, timeoutMs: 5_000 });
    const connector = connectorFor(settings, 'staging');
    expect(connector.name).toBe('sandbox');
    expect(connector.supports).toEqual({
      networkTokens: true,
      connectedVariant: true,
      idempotentReplay: true,
    });
  });

  it('fails loudly without an API key', async () => {
    const connector = sandboxConnector({ gateway: 'sandbox', style, url: gateway.url, timeoutMs: 5_000 });
    await expect(connector.authorize(request(), {})).rejects.toMatchObject({ kind: 'configuration' });
  });
});

describe('gateway settings', () => {
  it.each([
    [null, 'gateway settings must be an object'],
    [{ gateway: 'acme', style: 'json', url: 'http://x', timeoutMs: 1 }, 'gateway must be one of sandbox'],
    [{ gateway: 'sandbox', style: 'soap', url: 'http://x', timeoutMs: 1 }, 'style must be json or xml'],
    [{ gateway: 'sandbox', style: 'json', timeoutMs: 1 }, 'url must be a string'],
    [
      { gateway: 'sandbox', style: 'json', url: 'http://x' },
      'timeoutMs must be a whole number of ms from 1 to 120000',
    ],
  ])('refuses %j', (settings, message) => {
    expect(() => parseGatewaySettings(settings)).toThrow(message);
  });

  it.each([
    [{ url: 'not a url', timeoutMs: 1_000 }, 'sandbox gateway url is not a URL'],
    [{ url: 'ftp://127.0.0.1', timeoutMs: 1_000 }, 'sandbox gateway url must be http or https'],
    [{ url: 'http://127.0.0.1', timeoutMs: 0 }, 'sandbox gateway timeoutMs must be a positive integer'],
  ])('refuses to build a connector for %j', (settings, message) => {
    expect(() => sandboxConnector({ gateway: 'sandbox', style: 'json', ...settings })).toThrow(message);
  });
});

function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

function request(overrides: Partial<AuthorizationRequest> = {}): AuthorizationRequest {
  return {
    amount: 1999,
    currency: 'USD',
    orderReference: 'ord_7Kq2mW9xPzR4tLb8NcYv3d',
    source: {
      type: 'card',
      pan: new Secret('4111111111111111'),
      expMonth: 12,
      expYear: 2029,
      cvv: new Secret('123'),
    },
    billingAddress: {
      firstName: 'Taylor',
      lastName: 'Shopper',
      address1: '100 Congress Ave',
      address2: null,
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      country: 'US',
      phoneNumber: '+15125550100',
    },
    storedCredential: { kind: 'initial', initiator: 'cardholder' },
    variant: 'standard',
    idempotencyKey: 'idem_1',
    ...overrides,
  };
}

const RECORDED: [string, GatewayOutcome, boolean][] = [
  ['approved', 'approved', true],
  ['approved-connected', 'approved', true],
  ['declined', 'declined', true],
  ['invalid-card', 'invalid_card', true],
  ['processing-error', 'error', false],
];

describe('sandbox transformers', () => {
  it('maps every sandbox status, and only AUTHORIZED approves', () => {
    const outcomes = Object.fromEntries(SANDBOX_STATUSES.map((status) => [status, outcomeOf(status)]));
    expect(outcomes).toEqual({
      AUTHORIZED: 'approved',
      DECLINED: 'declined',
      REJECTED: 'invalid_card',
      FAILED: 'error',
    });
    expect(() => outcomeOf('PENDING' as SandboxStatus)).toThrow(GatewayError);
  });

  it('writes the JSON request in the gateway’s field names, revealing secrets only there', () => {
    expect(toJsonRequest(request())).toEqual({
      amount: 1999,
      currency: 'USD',
      reference: 'ord_7Kq2mW9xPzR4tLb8NcYv3d',
      source: { type: 'card', number: '4111111111111111', expMonth: 12, expYear: 2029, cvv: '123' },
      billingAddress: {
        firstName: 'Taylor',
        lastName: 'Shopper',
        line1: '100 Congress Ave',
        city: 'Austin',
        state: 'TX',
        postalCode: '78701',
        country: 'US',
        phone: '+15125550100',
      },
      storedCredential: { type: 'initial', initiator: 'cardholder' },
      connected: false,
    });
    const token = toJsonRequest(
      request({
        source: {
          type: 'network_token',
          token: new Secret('4895370012341111'),
          cryptogram: new Secret('AAAAAAAAAAAAAAAAAAAAAAAAAAA='),
          expMonth: 6,
          expYear: 2030,
        },
        storedCredential: { kind: 'subsequent', initiator: 'merchant', previousNetworkTransactionId: '123' },
        variant: 'connected',
      }),
    );
    expect(token).toMatchObject({
      source: {
        type: 'network_token',
        token: '4895370012341111',
        cryptogram: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      },
      storedCredential: { type: 'subsequent', initiator: 'merchant', previousNetworkTransactionId: '123' },
      connected: true,
    });
  });

  it('writes the XML request as the same fields in PascalCase elements', () => {
    const document = new XMLParser({ parseTagValue: false }).parse(
      toXmlRequest(request({ variant: 'connected' })),
    );
    expect(document.AuthorizationRequest).toEqual({
      Amount: '1999',
      Currency: 'USD',
      Reference: 'ord_7Kq2mW9xPzR4tLb8NcYv3d',
      Card: { Number: '4111111111111111', ExpMonth: '12', ExpYear: '2029', Cvv: '123' },
      BillingAddress: {
        FirstName: 'Taylor',
        LastName: 'Shopper',
        Line1: '100 Congress Ave',
        City: 'Austin',
        State: 'TX',
        PostalCode: '78701',
        Country: 'US',
        Phone: '+15125550100',
      },
      StoredCredential: { Type: 'initial', Initiator: 'cardholder' },
      Connected: 'true',
    });
  });

  it.each(RECORDED)('reads the recorded JSON answer %s as %s', (name, outcome, withNetworkId) => {
    const text = fixture(`${name}.json`);
    const raw = JSON.parse(text);
    const result = fromJsonResponse(201, text);
    expect(result).toEqual({
      outcome,
      gatewayTransactionId: raw.id,
      networkTransactionId: raw.network.transactionId,
      ...(raw.stpReferenceNum ? { stpReferenceNum: raw.stpReferenceNum } : {}),
      rawResponse: raw,
      message: raw.response.message,
    });
    expect(result.networkTransactionId === null).toBe(!withNetworkId);
  });

  it.each(RECORDED)('reads the recorded XML answer %s as %s', (name, outcome, withNetworkId) => {
    const text = fixture(`${name}.xml`);
    const answer = new XMLParser({ parseTagValue: false }).parse(text).AuthorizationResponse;
    const result = fromXmlResponse(201, text);
    expect(result).toEqual({
      outcome,
      gatewayTransactionId: answer.TransactionId,
      networkTransactionId: withNetworkId ? answer.NetworkTransactionId : null,
      ...(answer.StpReferenceNum ? { stpReferenceNum: answer.StpReferenceNum } : {}),
      rawResponse: text,
      message: answer.ResponseMessage,
    });
  });

  it('reads the recorded error answers as a refused request', () => {
    for (const read of [
      () => fromJsonResponse(400, fixture('invalid-request.json')),
      () => fromXmlResponse(400, fixture('invalid-request.xml')),
    ]) {
      expect(read).toThrow(
        expect.objectContaining({
          kind: 'rejected_request',
          statusCode: 400,
          message: expect.stringContaining('parameter_invalid'),
        }),
      );
    }
  });

  it.each([
    ['JSON that is not JSON', () => fromJsonResponse(201, '<html>502</html>')],
    [
      'JSON with an unknown status',
      () => fromJsonResponse(201, fixture('approved.json').replace('"AUTHORIZED"', '"PENDING"')),
    ],
    ['JSON without an id', () => fromJsonResponse(201, fixture('approved.json').replace('"id"', '"ref"'))],
    ['XML that is not XML', () => fromXmlResponse(201, '{"status":"AUTHORIZED"}')],
    ['XML of another document', () => fromXmlResponse(201, '<html><body>502</body></html>')],
    [
      'XML without a network transaction id',
      () =>
        fromXmlResponse(
          201,
          fixture('approved.xml').replace(/<NetworkTransactionId>.*<\/NetworkTransactionId>/, ''),
        ),
    ],
  ])('calls %s unexpected', (_label, read) => {
    expect(read).toThrow(expect.objectContaining({ kind: 'unexpected_response' }));
  });
});

describe('sandbox connector look-ups', () => {
  it.each(['json', 'xml'] as const)(
    'takes only the gateway’s own "no authorization" as none, not any 404 (%s)',
    async (style) => {
      const elsewhere = http.createServer((_request, response) => {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('Not Found');
      });
      await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
        const connector = sandboxConnector({ gateway: 'sandbox', style, url, timeoutMs: 2_000 });
        const lookup = connector.lookup?.('ord_any', { apiKey: new Secret('sk_sandbox_lookup') });
        await expect(lookup).rejects.toBeInstanceOf(GatewayError);
      } finally {
        await new Promise((resolve) => elsewhere.close(resolve));
      }
    },
  );
});
