import { describe, expect, it, vi } from 'vitest';
import { LazyChildLogger, scrub, scrubValues } from './log.js';
import { memoryLogger } from './test-support/log.js';

/**
 * What the lines say, without the time, process id and host name pino adds to each: those vary from run
 * to run, and a short secret such as a CVV would sometimes turn up in them by chance.
 */
function said(lines: Record<string, unknown>[]): string {
  return JSON.stringify(lines.map(({ time: _time, pid: _pid, hostname: _hostname, ...line }) => line));
}

describe('the per-request logger', () => {
  it('makes no pino child for a request that never logs', () => {
    const { log } = memoryLogger();
    const child = vi.spyOn(log, 'child');
    const requestLog = new LazyChildLogger(log, { requestId: 'req_1' }, {});
    expect(requestLog.level).toBe('info');
    expect(child).toHaveBeenCalledTimes(1);
    child.mockClear();
    new LazyChildLogger(log, { requestId: 'req_2' }, {});
    expect(child).not.toHaveBeenCalled();
  });

  it('logs with the request id, redacted like every other line, and makes its child once', async () => {
    const { log, lines } = memoryLogger();
    const child = vi.spyOn(log, 'child');
    const requestLog = new LazyChildLogger(log, { requestId: 'req_3' }, {});
    requestLog.error({ cardNumber: '4111111111111111' }, 'declined 4111 1111 1111 1111');
    requestLog.warn('second line');
    requestLog.debug('below the level');
    await new Promise((resolve) => setImmediate(resolve));
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toMatchObject([
      { level: 50, requestId: 'req_3', cardNumber: '[redacted]', msg: 'declined [card-number]' },
      { level: 40, requestId: 'req_3', msg: 'second line' },
    ]);
    expect(said(lines)).not.toContain('4111111111111111');
    expect(said(lines)).not.toContain('4111 1111 1111 1111');
  });
});

// Harmless text around every secret below, which scrub must leave alone.
const ORDER = 'ord_7Kq2mW9xPzR4tLb8NcYv3d';
const AROUND_JSON = `"orderId":"${ORDER}","amount":2599,"date":"2024-01-15"`;
const AROUND_TEXT = `order ${ORDER}, amount 2599, 2024-01-15;`;

describe('scrub', () => {
  it.each([
    ['a JSON cvv', `{${AROUND_JSON},"cvv":"987"}`, '987'],
    ['a JSON cvv with spaces, as a number', `{${AROUND_JSON}, "cvv" : 987}`, '987'],
    ['a JSON cvc', `{${AROUND_JSON},"cvc":"1234"}`, '1234'],
    ['a JSON cvv2', `{"cvv2":"456",${AROUND_JSON}}`, '456'],
    ['a JSON card cvv', `{"cardCvv":"456",${AROUND_JSON}}`, '456'],
    ['a JSON securityCode', `{${AROUND_JSON},"securityCode":"7531"}`, '7531'],
    ['a JSON security_code', `{${AROUND_JSON},"security_code":"7531"}`, '7531'],
    [
      'a JSON cryptogram',
      `{${AROUND_JSON},"cryptogram":"rAwv4EKolFpod9ltYoJkEt2pPF8="}`,
      'rAwv4EKolFpod9ltYoJkEt2pPF8=',
    ],
    ['a short JSON pan', `{${AROUND_JSON},"pan":"411111111"}`, '411111111'],
    ['a JSON token', `{${AROUND_JSON},"token":"tok_9sd8f7a6"}`, 'tok_9sd8f7a6'],
    ['a JSON networkToken', `{${AROUND_JSON},"networkToken":"ntk_9sd8f7a6"}`, 'ntk_9sd8f7a6'],
    ['a JSON password', `{${AROUND_JSON},"password":"hunter2!"}`, 'hunter2!'],
    ['a password with escaped quotes', `{"password":"pa\\"qu0ted\\"word",${AROUND_JSON}}`, 'qu0ted'],
    ['a JSON secret', `{"secret":"s3cr3t-value",${AROUND_JSON}}`, 's3cr3t-value'],
    ['a JSON client_secret', `{"client_secret":"s3cr3t-value",${AROUND_JSON}}`, 's3cr3t-value'],
    ['a JSON apiKey', `{${AROUND_JSON},"apiKey":"key_AbC123xyz"}`, 'key_AbC123xyz'],
    ['a JSON api_key', `{${AROUND_JSON},"api_key":"key_AbC123xyz"}`, 'key_AbC123xyz'],
    ['a JSON authorization', `{${AROUND_JSON},"authorization":"Basic dXNlcjpwYXNz"}`, 'dXNlcjpwYXNz'],
    ['a value cut short', `{${AROUND_JSON},"cryptogram":"rAwv4EKolFpod9`, 'rAwv4EKolFpod9'],
    [
      'JSON inside a JSON string',
      `{"message":"bad {\\"cvv\\":\\"987\\",${AROUND_JSON.replaceAll('"', '\\"')}}"}`,
      '987',
    ],
    ['single quotes', `{'cvc': '321', 'orderId': '${ORDER}', 'amount': 2599, 'date': '2024-01-15'}`, '321'],
    ['a query cvv', `${AROUND_TEXT} cvv=123`, 'cvv=123'],
    ['a form cvv', `order=${ORDER}&cvv=123&amount=2599&date=2024-01-15`, '123'],
    [
      'a form cryptogram',
      `${AROUND_TEXT} cryptogram=rAwv4EKolFpod9ltYoJkEt2pPF8=`,
      'rAwv4EKolFpod9ltYoJkEt2pPF8=',
    ],
    ['a form token', `token=abc-def-789&order=${ORDER}&amount=2599&date=2024-01-15`, 'abc-def-789'],
    ['a form api_key', `api_key=zzz_top&order=${ORDER}&amount=2599&date=2024-01-15`, 'zzz_top'],
    ['a Basic authorization header', `${AROUND_TEXT}\nAuthorization: Basic dXNlcjpwYXNz`, 'dXNlcjpwYXNz'],
    [
      'a Digest authorization header',
      `authorization: Digest username="u", response="6629fae49393a05397450978507c4ef1"\n${AROUND_TEXT}`,
      '6629fae49393a05397450978507c4ef1',
    ],
    [
      'a proxy authorization header',
      `${AROUND_TEXT}\nProxy-Authorization: Negotiate YIIBhQYGKwYB`,
      'YIIBhQYGKwYB',
    ],
    ['an API key header', `X-Api-Key: abc123secret\n${AROUND_TEXT}`, 'abc123secret'],
    ['a cookie header', `${AROUND_TEXT}\nCookie: session=abcdef123; theme=dark`, 'abcdef123'],
    [
      'an XML cvv',
      `<Order>${ORDER}</Order><Amount>2599</Amount><Date>2024-01-15</Date><Cvv>987</Cvv>`,
      '987',
    ],
    [
      'an XML cryptogram with a namespace',
      `<Order>${ORDER}</Order><Amount>2599</Amount><Date>2024-01-15</Date><ns:Cryptogram a="1">rAwv4EKolFpod9</ns:Cryptogram>`,
      'rAwv4EKolFpod9',
    ],
    ['a card number after a letter', `${AROUND_TEXT} x4111111111111111`, '4111111111111111'],
    ['a card number before letters', `${AROUND_TEXT} 4111111111111111abc`, '4111111111111111'],
    ['a card number after an underscore', `${AROUND_TEXT} pan_4111111111111111`, '4111111111111111'],
    ['a grouped card number between letters', `${AROUND_TEXT} card4111-1111-1111-1111end`, '1111-1111-1111'],
    ['a card number glued to more digits', `${AROUND_TEXT} 41111111111111111229`, '4111111111111111'],
    [
      'a URL-encoded JSON cvv',
      `data=%7B%22cvv%22%3A%22987%22%2C%22order%22%3A%22${ORDER}%22%7D&amount=2599&date=2024-01-15`,
      '987',
    ],
    [
      'a twice URL-encoded JSON cryptogram',
      `data=%257B%2522cryptogram%2522%253A%2522rAwv4EKolFpod9%2522%257D&order=${ORDER}&amount=2599&date=2024-01-15`,
      'rAwv4EKolFpod9',
    ],
    ['a card number grouped by encoded spaces', `${AROUND_TEXT} 4111%201111%201111%201111`, '1111'],
    ['a card number grouped by form spaces', `${AROUND_TEXT}&pan_hint=4111+1111+1111+1111`, '1111'],
    ['a card number grouped by dots', `${AROUND_TEXT} order 4111.1111.1111.1111 was not found`, '1111'],
    [
      'an API key after an underscore',
      `${AROUND_TEXT} x_sk_test_gmbjHIt9fBFb4OVFR4oGo8d3`,
      'gmbjHIt9fBFb4OVFR4oGo8d3',
    ],
  ])('removes %s and keeps the text around it', (_label, text, secret) => {
    const scrubbed = scrub(text);
    expect(scrubbed).not.toContain(secret);
    for (const harmless of [ORDER, '2599', '2024-01-15']) expect(scrubbed).toContain(harmless);
  });

  it('leaves IPv4 addresses and decimals, whose dotted digits are no card number', () => {
    const text = 'client 192.168.100.200 via 10.0.0.1, 1234.5678 ms, version 2026.11.29';
    expect(scrub(text)).toBe(text);
  });

  it('leaves keys that only look alike, and a value that is not there', () => {
    const text = `{"timeSpan":"3 days","tokenType":"card","number":"12",${AROUND_JSON}} body/cvv must be a string`;
    expect(scrub(`${text} cvv=987`)).toBe(`${text} cvv=[redacted]`);
  });

  it('removes a request a gateway echoed, CVV included', () => {
    const echoed = `cannot parse request {"amount":2599,"reference":"${ORDER}","source":{"type":"card","number":"4111111111111111","expMonth":12,"expYear":2029,"cvv":"987"},"date":"2024-01-15"}`;
    expect(scrub(echoed)).toBe(
      `cannot parse request {"amount":2599,"reference":"${ORDER}","source":{"type":"card","number":"[card-number]","expMonth":12,"expYear":2029,"cvv":"[redacted]"},"date":"2024-01-15"}`,
    );
  });

  // 100 KB of what makes regular expressions backtrack: each would take seconds or more if any rule
  // were quadratic or worse; linear, each takes a few milliseconds.
  it.each([
    ['digits', '1'],
    ['short digit groups', '1 2 3 4 5 6 7 8 9 0 1  '],
    ['keys without values', 'cvv: '],
    ['open JSON strings', '"cvv":"'],
    ['open strings inside strings', '\\"cvv\\":\\"'],
    ['escapes', '\\\\\\"'],
    ['header keys before quotes', 'authorization: "'],
    ['open tags', '<a:b '],
    ['percent escapes', '%25%2522cvv%2522%253A'],
    ['echoed secrets', 'x4111111111111111 "cvv":"987" cvv=987&<Cvv>987</Cvv> '],
  ])('scrubs 100 KB of %s in linear time', (_label, unit) => {
    const text = unit.repeat(Math.ceil(100_000 / unit.length));
    const start = performance.now();
    const scrubbed = scrub(`${text}cvv=987`);
    expect(performance.now() - start).toBeLessThan(1_000);
    expect(scrubbed).not.toContain('987');
  });
});

describe('the logger', () => {
  it('keeps the values of the keys it redacts in objects out of its messages too', async () => {
    const { log, lines } = memoryLogger();
    // `number` is the one exception: in free text only a card number's digits are removed from it.
    const keys = ['pan', 'cardNumber', 'token', 'cvv', 'cvc', 'cryptogram', 'apiKey', 'secret'];
    keys.push('webhookSecret', 'password', 'pspRawResponse', 'authorization', 'cookie');
    for (const key of keys) log.info({ [key]: 'in-object', orderId: ORDER }, `paid; ${key}=in-message`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(keys.length);
    for (const [index, key] of keys.entries()) {
      expect(lines[index]).toMatchObject({
        [key]: '[redacted]',
        orderId: ORDER,
        msg: `paid; ${key}=[redacted]`,
      });
    }
  });

  it('scrubs an error whose message echoes a request', async () => {
    const { log, lines } = memoryLogger();
    const error = new Error('sandbox gateway refused the request (422, invalid_request: {"cvv":"987"})');
    log.warn({ err: error, orderId: ORDER }, 'the gateway gave no decision; cvv=987');
    await new Promise((resolve) => setImmediate(resolve));
    expect(said(lines)).not.toContain('987');
    expect(lines[0]).toMatchObject({
      orderId: ORDER,
      err: { message: expect.stringContaining('"cvv":"[redacted]"') },
    });
  });

  it('scrubs what else an error carries: its properties, the objects they hold, its cause, its bytes', async () => {
    const { log, lines } = memoryLogger();
    const error = Object.assign(new Error('insert failed', { cause: new Error('card 4111111111111111') }), {
      detail: 'Failing row contains (4111111111111111, 2029).',
      body: '{"cvv":"987","orderId":"x"}',
      networkToken: 'ntk-value-5150',
      payload: Buffer.from('4111111111111111'),
      response: { statusCode: 422, headers: { authorization: 'Bearer b3arer-value' }, at: new Date(0) },
    });
    log.error({ err: error, orderId: ORDER }, 'the insert failed');
    log.warn({ error: 'the receiver answered {"cvc":"321"}' }, 'an attempt failed');
    await new Promise((resolve) => setImmediate(resolve));
    const text = said(lines);
    for (const secret of ['4111111111111111', '987', 'ntk-value-5150', 'b3arer-value', '321'])
      expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({
      orderId: ORDER,
      err: {
        message: 'insert failed: card [card-number]',
        detail: 'Failing row contains ([card-number], 2029).',
        networkToken: '[redacted]',
        payload: '[16 bytes]',
        response: {
          statusCode: 422,
          headers: { authorization: '[redacted]' },
          at: '1970-01-01T00:00:00.000Z',
        },
      },
    });
    expect(lines[1]).toMatchObject({ error: 'the receiver answered {"cvc":"[redacted]"}' });
  });
});

describe('scrubValues', () => {
  it('keeps a UUID whole, digit groups and all, and still takes out a card number beside it', () => {
    const id = '7a123456-7890-4123-8456-789012345678';
    expect(scrubValues(`sessionId ${id} was not found; 4111 1111 1111 1111`)).toBe(
      `sessionId ${id} was not found; [card-number]`,
    );
    expect(scrubValues('paymentId 41111111-1111-1111-1111-111111111111x')).not.toContain('1111-1111-1111');
  });
});
