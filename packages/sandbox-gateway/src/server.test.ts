import { randomBytes, randomUUID } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passesLuhn } from './cards.js';
import { type SandboxGateway, startSandboxGateway } from './server.js';

let gateway: SandboxGateway;
beforeAll(async () => {
  gateway = await startSandboxGateway({ port: 0, host: '127.0.0.1' });
});
afterAll(() => gateway.close());

const NEXT_YEAR = new Date().getUTCFullYear() + 1;
const xml = new XMLParser({ parseTagValue: false });

/** The parts of a JSON answer the tests read. */
interface JsonBody {
  id: string;
  status: string;
  response: { code: string; message: string; authCode: string | null; cvvResult: string | null };
  network: { transactionId: string | null };
  paymentMethod: Record<string, unknown>;
  stpReferenceNum?: string;
  error: Record<string, unknown>;
}

/** An XML answer as parsed; a test reads the root it expects and fails on finding the other. */
interface XmlDocument {
  AuthorizationResponse: Record<string, unknown>;
  ErrorResponse: Record<string, unknown>;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function post(path: string, body: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk_sandbox_tests', ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A JSON-style request for `number`, with `overrides` merged over the top level. */
function jsonRequest(number: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 1999,
    currency: 'USD',
    reference: 'ord_test_1',
    source: { type: 'card', number, expMonth: 12, expYear: NEXT_YEAR, cvv: '123' },
    billingAddress: {
      firstName: 'Taylor',
      lastName: 'Shopper',
      line1: '100 Congress Ave',
      city: 'Austin',
      state: 'TX',
      postalCode: '78701',
      country: 'US',
    },
    storedCredential: { type: 'initial', initiator: 'cardholder' },
    ...overrides,
  };
}

async function postJson(body: unknown, idempotencyKey?: string): Promise<Answer & { json: JsonBody }> {
  const answer = await post('/v1/authorizations', JSON.stringify(body), {
    'content-type': 'application/json',
    ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
  });
  return { ...answer, json: JSON.parse(answer.text) };
}

function xmlRequest(source: string, extra = ''): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<AuthorizationRequest>
  <Amount>1999</Amount>
  <Currency>USD</Currency>
  <Reference>ord_xml_1</Reference>
  ${source}
  <BillingAddress>
    <FirstName>Taylor</FirstName><LastName>Shopper</LastName><Line1>100 Congress Ave</Line1>
    <City>Austin</City><State>TX</State><PostalCode>78701</PostalCode><Country>US</Country>
  </BillingAddress>
  ${extra}
</AuthorizationRequest>`;
}

function xmlCard(number: string, expYear = NEXT_YEAR): string {
  return `<Card><Number>${number}</Number><ExpMonth>12</ExpMonth><ExpYear>${expYear}</ExpYear><Cvv>123</Cvv></Card>`;
}

async function postXml(body: string, idempotencyKey?: string): Promise<Answer & { doc: XmlDocument }> {
  const answer = await post('/xml/authorizations', body, {
    'content-type': 'application/xml',
    ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
  });
  return { ...answer, doc: xml.parse(answer.text) };
}

/** A Luhn-valid 16-digit number starting `prefix` and ending `last4`, as network tokens are. */
function tokenNumber(prefix: string, last4: string): string {
  for (let digit = 0; ; digit++) {
    const number = `${prefix.padEnd(11, '0')}${digit}${last4}`;
    if (passesLuhn(number)) return number;
  }
}

/** 20 random bytes in base64, shaped like a token service's cryptogram. */
function cryptogram(): string {
  return randomBytes(20).toString('base64');
}

const OUTCOMES = [
  ['4111111111111111', 'AUTHORIZED', '00', true],
  ['5555555555554444', 'AUTHORIZED', '00', true],
  ['4000000000000002', 'DECLINED', '05', true],
  ['4000000000000069', 'REJECTED', '14', true],
  ['4000000000000119', 'FAILED', '96', false],
  ['4242424242424242', 'AUTHORIZED', '00', true],
  ['4111111111111112', 'REJECTED', '14', false],
] as const;

describe('JSON style', () => {
  it.each(OUTCOMES)('answers %s with %s (%s)', async (number, status, code, withNetworkId) => {
    const { status: http, headers, json } = await postJson(jsonRequest(number));
    expect(http).toBe(201);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(json).toMatchObject({
      object: 'authorization',
      status,
      amount: 1999,
      currency: 'USD',
      reference: 'ord_test_1',
      response: { code },
      paymentMethod: { type: 'card', last4: number.slice(-4), expMonth: 12, expYear: NEXT_YEAR },
      livemode: false,
    });
    expect(json.id).toMatch(/^gtx_[0-9a-f]{24}$/);
    if (withNetworkId) expect(json.network.transactionId).toMatch(/^\d{15}$/);
    else expect(json.network.transactionId).toBeNull();
    expect(json.response.authCode === null).toBe(status !== 'AUTHORIZED');
    expect(json).not.toHaveProperty('stpReferenceNum');
    expect(json.paymentMethod).not.toHaveProperty('number');
  });

  it('refuses an expired card as invalid, before the network', async () => {
    const request = jsonRequest('4111111111111111');
    (request.source as Record<string, unknown>).expYear = 2020;
    const { json } = await postJson(request);
    expect(json).toMatchObject({ status: 'REJECTED', response: { code: '54', message: 'Expired card' } });
    expect(json.network.transactionId).toBeNull();
  });

  it('gives connected merchants an stpReferenceNum', async () => {
    const { json } = await postJson(jsonRequest('4111111111111111', { connected: true }));
    expect(json.stpReferenceNum).toMatch(/^\d{10}$/);
  });

  it('answers a repeated key and body with the first answer, and refuses the key for another body', async () => {
    const key = randomUUID();
    const first = await postJson(jsonRequest('4111111111111111'), key);
    const again = await postJson(jsonRequest('4111111111111111'), key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await postJson(jsonRequest('4111111111111111', { amount: 2000 }), key);
    expect(other.status).toBe(409);
    expect(other.json.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    const fresh = await postJson(jsonRequest('4111111111111111'), randomUUID());
    expect(fresh.json.id).not.toBe(first.json.id);
  });

  it('gives the authorization made with a key, as first answered, in its style and account only', async () => {
    // As long as a key may be (255 characters): longer than a path parameter's default limit.
    const key = `${randomUUID()}/${'k'.repeat(218)}`;
    const lookUp = async (path: string, apiKey = 'sk_sandbox_tests') => {
      const response = await fetch(`${gateway.url}${path}${encodeURIComponent(key)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      return { status: response.status, headers: response.headers, text: await response.text() };
    };
    const none = await lookUp('/v1/authorizations/by-idempotency-key/');
    expect(none.status).toBe(404);
    expect(JSON.parse(none.text).error).toMatchObject({
      code: 'authorization_not_found',
      param: 'Idempotency-Key',
    });

    const made = await postJson(jsonRequest('4111111111111111'), key);
    const found = await lookUp('/v1/authorizations/by-idempotency-key/');
    expect([found.status, found.text]).toEqual([201, made.text]);
    expect(found.headers.get('idempotent-replayed')).toBe('true');
    expect((await lookUp('/xml/authorizations/by-idempotency-key/')).status).toBe(409);
    expect((await lookUp('/v1/authorizations/by-idempotency-key/', 'sk_sandbox_someone_else')).status).toBe(
      404,
    );
    const anonymous = await fetch(
      `${gateway.url}/v1/authorizations/by-idempotency-key/${encodeURIComponent(key)}`,
    );
    expect(anonymous.status).toBe(401);
  });

  it('keeps one merchant account’s idempotency keys apart from another’s', async () => {
    const key = randomUUID();
    const mine = await postJson(jsonRequest('4111111111111111'), key);
    const theirs = await post('/v1/authorizations', JSON.stringify(jsonRequest('4111111111111111')), {
      authorization: 'Bearer sk_sandbox_someone_else',
      'content-type': 'application/json',
      'idempotency-key': key,
    });
    expect((JSON.parse(theirs.text) as JsonBody).id).not.toBe(mine.json.id);
  });

  it('authorizes a network token with a fresh cryptogram, and refuses the cryptogram spent', async () => {
    const source = {
      type: 'network_token',
      token: tokenNumber('489537', '1111'),
      cryptogram: cryptogram(),
      expMonth: 6,
    };
    const request = jsonRequest('', { source: { ...source, expYear: NEXT_YEAR } });
    const key = randomUUID();
    const first = await postJson(request, key);
    expect(first.json).toMatchObject({
      status: 'AUTHORIZED',
      paymentMethod: { type: 'network_token', brand: 'visa', last4: '1111' },
    });
    expect(first.json.response.cvvResult).toBeNull();
    expect((await postJson(request, key)).text).toBe(first.text);
    const reused = await postJson(request, randomUUID());
    expect(reused.json).toMatchObject({
      status: 'REJECTED',
      response: { code: '63', message: 'Cryptogram already used' },
    });
    expect(reused.json.network.transactionId).toBeNull();
  });

  it('gives a token the outcome of its last four, and refuses a malformed cryptogram', async () => {
    const token = (number: string, value: string) =>
      jsonRequest('', {
        source: { type: 'network_token', token: number, cryptogram: value, expMonth: 6, expYear: NEXT_YEAR },
      });
    expect((await postJson(token(tokenNumber('489537', '0002'), cryptogram()))).json.status).toBe('DECLINED');
    expect((await postJson(token(tokenNumber('489537', '0119'), cryptogram()))).json.status).toBe('FAILED');
    for (const malformed of ['abc', `${cryptogram().slice(0, 27)}!`, randomBytes(21).toString('base64')]) {
      const { json } = await postJson(token(tokenNumber('489537', '1111'), malformed));
      expect(json).toMatchObject({
        status: 'REJECTED',
        response: { code: '63', message: 'Invalid cryptogram' },
      });
    }
  });

  it.each([
    ['amount', { amount: 19.99 }, 'amount must be an integer'],
    ['amount', { amount: '1999' }, 'amount must be an integer'],
    ['amount', { amount: 0 }, 'amount must be between 1 and 99999999'],
    ['currency', { currency: 'usd' }, 'currency must be an ISO 4217 code such as USD'],
    ['reference', { reference: undefined }, 'reference is required'],
    ['source.type', { source: { type: 'bank' } }, 'source.type must be one of card, network_token'],
    ['cvc', { cvc: '123' }, 'cvc is not a known parameter'],
    [
      'storedCredential.previousNetworkTransactionId',
      { storedCredential: { type: 'subsequent', initiator: 'merchant' } },
      'storedCredential.previousNetworkTransactionId is required for merchant-initiated subsequent transactions',
    ],
  ])('refuses a bad %s with a 400 naming it', async (param, overrides, message) => {
    const { status, json } = await postJson(jsonRequest('4111111111111111', overrides));
    expect(status).toBe(400);
    expect(json.error).toEqual({ type: 'invalid_request_error', code: 'parameter_invalid', param, message });
  });

  it('accepts a subsequent merchant-initiated charge that names the first', async () => {
    const first = await postJson(jsonRequest('4111111111111111'));
    const previousNetworkTransactionId = first.json.network.transactionId;
    const { json } = await postJson(
      jsonRequest('4111111111111111', {
        storedCredential: { type: 'subsequent', initiator: 'merchant', previousNetworkTransactionId },
      }),
    );
    expect(json).toMatchObject({
      status: 'AUTHORIZED',
      storedCredential: { type: 'subsequent', initiator: 'merchant', previousNetworkTransactionId },
    });
  });

  it('refuses bad JSON, a missing API key and unknown routes in its own error shape', async () => {
    const bad = await post('/v1/authorizations', '{bad', { 'content-type': 'application/json' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_body' });
    const anonymous = await fetch(`${gateway.url}/v1/authorizations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(jsonRequest('4111111111111111')),
    });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as JsonBody).error.type).toBe('authentication_error');
    const missing = await fetch(`${gateway.url}/v1/payments`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as JsonBody).error.code).toBe('not_found');
  });
});

describe('XML style', () => {
  it.each(OUTCOMES)('answers %s with %s (%s)', async (number, status, code, withNetworkId) => {
    const { status: http, headers, text, doc } = await postXml(xmlRequest(xmlCard(number)));
    expect(http).toBe(201);
    expect(headers.get('content-type')).toMatch(/^application\/xml/);
    expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    const answer = doc.AuthorizationResponse;
    expect(answer).toMatchObject({
      Status: status,
      ResponseCode: code,
      Amount: '1999',
      Currency: 'USD',
      Reference: 'ord_xml_1',
      PaymentMethod: { Type: 'card', Last4: number.slice(-4) },
    });
    expect(answer.TransactionId).toMatch(/^gtx_[0-9a-f]{24}$/);
    if (withNetworkId) expect(answer.NetworkTransactionId).toMatch(/^\d{15}$/);
    else expect(answer.NetworkTransactionId).toBe('');
    expect(answer).not.toHaveProperty('StpReferenceNum');
    expect(text).not.toContain(number);
  });

  it('reads network tokens, stored credentials and the connected flag', async () => {
    const body = xmlRequest(
      `<NetworkToken><Token>${tokenNumber('520473', '4444')}</Token><Cryptogram>${cryptogram()}</Cryptogram><ExpMonth>6</ExpMonth><ExpYear>${NEXT_YEAR}</ExpYear></NetworkToken>`,
      '<StoredCredential><Type>initial</Type><Initiator>cardholder</Initiator></StoredCredential><Connected>true</Connected>',
    );
    const answer = (await postXml(body)).doc.AuthorizationResponse;
    expect(answer).toMatchObject({
      Status: 'AUTHORIZED',
      PaymentMethod: { Type: 'network_token', Brand: 'mastercard', Last4: '4444' },
      StoredCredential: { Type: 'initial', Initiator: 'cardholder', PreviousNetworkTransactionId: '' },
    });
    expect(answer.StpReferenceNum).toMatch(/^\d{10}$/);
  });

  it('replays a repeated key and body, and refuses the key for another body', async () => {
    const key = randomUUID();
    const first = await postXml(xmlRequest(xmlCard('4111111111111111')), key);
    const again = await postXml(xmlRequest(xmlCard('4111111111111111')), key);
    expect(again.text).toBe(first.text);
    const other = await postXml(xmlRequest(xmlCard('5555555555554444')), key);
    expect(other.status).toBe(409);
    expect(other.doc.ErrorResponse).toMatchObject({
      Type: 'idempotency_error',
      Code: 'idempotency_key_reused',
    });
  });

  it('refuses the same key sent to the other style', async () => {
    const key = randomUUID();
    await postXml(xmlRequest(xmlCard('4111111111111111')), key);
    const json = await postJson(jsonRequest('4111111111111111', { reference: 'ord_xml_1' }), key);
    expect(json.status).toBe(409);
  });

  it.each([
    ['<AuthorizationRequest><Amount>', 'body'],
    ['<!DOCTYPE x [<!ENTITY a "a">]><AuthorizationRequest/>', 'body'],
    ['<Authorization/>', 'AuthorizationRequest'],
    [xmlRequest(xmlCard('4111111111111111')).replace('<Amount>1999', '<Amount>19.99'), 'Amount'],
    [xmlRequest(xmlCard('4111111111111111'), '<Amount>5</Amount>'), 'Amount'],
    [xmlRequest(xmlCard('4111111111111111'), '<Cvc>1</Cvc>'), 'Cvc'],
    [xmlRequest(xmlCard('4111111111111111').replace('<Cvv>123', '<Cvv>12')), 'Card/Cvv'],
    [xmlRequest(''), 'Card'],
  ])('refuses %s with a 400 naming %s', async (body, param) => {
    const { status, doc } = await postXml(body);
    expect(status).toBe(400);
    expect(doc.ErrorResponse).toMatchObject({ Type: 'invalid_request_error', Param: param });
  });
});
