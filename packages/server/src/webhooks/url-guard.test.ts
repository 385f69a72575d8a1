import type dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import {
  checkWebhookUrl,
  guardedConnector,
  guardedLookup,
  isLoopbackHost,
  nonPublicHost,
  nonPublicRange,
  WebhookDestinations,
} from './url-guard.js';

const PRODUCTION = new WebhookDestinations('production', { loopback: false });
const STAGING = new WebhookDestinations('staging', { loopback: true });
/** A staging service others reach (WEBHOOK_LOOPBACK=off): the machine's own ports are not theirs to try. */
const SHARED_STAGING = new WebhookDestinations('staging', { loopback: false });

describe('address classification', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.10.1', 'link-local'],
    ['100.100.100.200', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['192.0.0.8', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::127.0.0.1', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'reserved'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['ff02::1', 'multicast'],
    ['100::1', 'reserved'],
    ['2001::1', 'reserved'],
    // SIIT's IPv4-translated form (::ffff:0:a.b.c.d) reaches the IPv4 address it carries.
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:10.0.0.1', 'private'],
    // Outside 2000::/3, the only part of IPv6 routed on the internet.
    ['1::1', 'reserved'],
    ['4000::1', 'reserved'],
    ['e000::1', 'reserved'],
    ['fe00::1', 'reserved'],
  ])('%s is %s', (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '::ffff:8.8.8.8',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '::ffff:0:808:808',
    '2a01:4f8:c17::1',
  ])('%s is public', (address) => {
    expect(nonPublicRange(address)).toBeUndefined();
  });

  it('calls anything that is not an IP address invalid', () => {
    expect(nonPublicRange('example.com')).toBe('invalid');
  });
});

describe('nonPublicHost, the check on a URL host before any lookup', () => {
  it.each([
    ['8.8.8.8', undefined],
    ['[2606:4700:4700::1111]', undefined],
    ['2606:4700:4700::1111', undefined],
    ['shop.example.com', undefined],
    ['localhost.example.com', undefined],
    ['[::1]', 'loopback'],
    ['[64:ff9b::a00:1]', 'private'],
    ['10.0.0.1', 'private'],
    ['localhost', 'loopback'],
    ['localhost.', 'loopback'],
    ['LocalHost', 'loopback'],
    ['api.localhost.', 'loopback'],
  ])('%s is %s', (host, range) => {
    expect(nonPublicHost(host)).toBe(range);
  });
});

describe('isLoopbackHost, whether the service itself is reached on loopback only', () => {
  it.each([
    ['localhost', true],
    ['LOCALHOST', true],
    ['localhost.', true],
    ['shop.localhost', true],
    ['127.0.0.1', true],
    ['127.9.9.9', true],
    ['[::1]', true],
    ['::1', true],
    ['[::ffff:127.0.0.1]', true],
    // Forms that only carry a loopback address reach another machine, if any.
    ['[64:ff9b::7f00:1]', false],
    ['[2002:7f00:1::]', false],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['pay.example', false],
  ])('%s: %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('checkWebhookUrl', () => {
  const refusedWith = (url: string, destinations: WebhookDestinations): string => {
    try {
      checkWebhookUrl(url, destinations);
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).errorCode).toBe('WEBHOOK_URL_NOT_ALLOWED');
      return (error as DomainError).message;
    }
    throw new Error(`${url} was accepted in ${destinations.env}`);
  };

  it('accepts http and https to loopback and the internet in staging', () => {
    expect(checkWebhookUrl('http://localhost:3000/hooks', STAGING).origin).toBe('http://localhost:3000');
    expect(checkWebhookUrl('http://127.0.0.1:9/x', STAGING).pathname).toBe('/x');
    expect(checkWebhookUrl('http://shop.example.com/x', STAGING).hostname).toBe('shop.example.com');
  });

  it('refuses private, link-local and cloud metadata addresses in staging', () => {
    expect(refusedWith('https://10.0.0.1/x', STAGING)).toBe(
      "The webhook URL's host 10.0.0.1 is a private address; staging delivers to public and loopback addresses only.",
    );
    expect(refusedWith('http://169.254.169.254/latest/meta-data/', STAGING)).toMatch(
      /169\.254\.169\.254 is a cloud metadata address; staging delivers to public and loopback/,
    );
    expect(refusedWith('http://169.254.1.1/', STAGING)).toMatch(/a link-local address/);
    expect(refusedWith('http://[fe80::1]/', STAGING)).toMatch(/a link-local address/);
    expect(refusedWith('http://[fd00:ec2::254]/', STAGING)).toMatch(/a cloud metadata address/);
    expect(refusedWith('http://100.100.100.200/', STAGING)).toMatch(/a cloud metadata address/);
  });

  it('refuses loopback in every form in staging with WEBHOOK_LOOPBACK off, and still takes the internet', () => {
    for (const url of [
      'http://localhost:3000/hooks',
      'http://api.localhost/',
      'http://127.0.0.1:9/x',
      'http://127.8.9.10/',
      'http://[::1]:4000/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
    ]) {
      expect(refusedWith(url, SHARED_STAGING)).toMatch(
        /is a loopback address; staging delivers to public addresses only\.$/,
      );
    }
    expect(checkWebhookUrl('http://shop.example.com/x', SHARED_STAGING).hostname).toBe('shop.example.com');
    expect(
      new WebhookDestinations('staging', { allowedNetworks: ['10.20.0.0/16'], loopback: false }).rule,
    ).toBe('staging delivers to public addresses and the networks the operator allowed only');
  });

  it('never opens loopback in production, whatever it is told', () => {
    expect(new WebhookDestinations('production', { loopback: true }).refusedRange('127.0.0.1')).toBe(
      'loopback',
    );
  });

  it('accepts a public https URL in production', () => {
    expect(checkWebhookUrl('https://shop.example.com/webhooks?x=1', PRODUCTION).search).toBe('?x=1');
  });

  it('names the rule that refuses a URL', () => {
    expect(refusedWith('not a url', STAGING)).toMatch(/absolute http\(s\) URL/);
    expect(refusedWith('ftp://shop.example.com/', STAGING)).toMatch(/http or https/);
    expect(refusedWith('https://user:pw@shop.example.com/', STAGING)).toMatch(/user name or password/);
    expect(refusedWith('http://shop.example.com/', PRODUCTION)).toMatch(/https in production/);
    expect(refusedWith('https://localhost/', PRODUCTION)).toMatch(/loopback/);
    expect(refusedWith('https://api.localhost/', PRODUCTION)).toMatch(/loopback/);
    expect(refusedWith('https://localhost./', PRODUCTION)).toMatch(/localhost\. is a loopback address/);
    expect(refusedWith('https://127.0.0.1/', PRODUCTION)).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect(refusedWith('https://2130706433/', PRODUCTION)).toMatch(/loopback/);
    expect(refusedWith('https://[::1]/', PRODUCTION)).toMatch(/loopback/);
    expect(refusedWith('https://[::ffff:192.168.0.1]/', PRODUCTION)).toMatch(/private/);
    expect(refusedWith('https://169.254.169.254/latest', PRODUCTION)).toMatch(/cloud metadata/);
  });
});

describe('connect-time guard', () => {
  let server: http.Server;
  let port: number;
  let requests = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refuses a name that resolves to loopback', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(PRODUCTION)('localhost', { all: true }, (err) => resolve(err)),
    );
    // What an internal name resolves to is not the merchant's to learn.
    expect(error?.message).toBe(
      "The webhook URL's host localhost resolves to a non-public address; production delivers to public addresses only.",
    );
  });

  it('gives the connections that ask for a name at once one lookup between them (DNS resolver faked)', () => {
    const calls: { hostname: string; family: unknown; answer: (...answer: unknown[]) => void }[] = [];
    const fake = ((hostname: string, options: dns.LookupOptions, answer: (...answer: unknown[]) => void) => {
      calls.push({ hostname, family: options.family, answer });
    }) as unknown as typeof dns.lookup;
    const lookup = guardedLookup(PRODUCTION, fake);
    const answers: unknown[] = [];
    const keep = (error: unknown, addresses: unknown) => answers.push(error ?? addresses);
    for (let i = 0; i < 5; i++) lookup('hooks.example.com', { all: true }, keep);
    // A connection that wants one address shares the call, and gets the first allowed.
    const single: unknown[] = [];
    lookup('hooks.example.com', {}, (error, address) => single.push(error ?? address));
    lookup('other.example.com', {}, keep);
    lookup('hooks.example.com', { family: 6, all: true }, keep);
    expect(calls.map(({ hostname, family }) => [hostname, family])).toEqual([
      ['hooks.example.com', undefined],
      ['other.example.com', undefined],
      ['hooks.example.com', 6],
    ]);

    calls[0]?.answer(null, [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ]);
    expect(answers).toEqual(Array(5).fill([{ address: '93.184.216.34', family: 4 }]));
    expect(single).toEqual(['93.184.216.34']);
    // Answered, the name is asked again by the next connection: nothing is kept past the lookup.
    lookup('hooks.example.com', { all: true }, keep);
    expect(calls).toHaveLength(4);

    calls[1]?.answer(
      Object.assign(new Error('getaddrinfo EAI_AGAIN other.example.com'), { code: 'EAI_AGAIN' }),
      [],
    );
    expect(answers[5]).toMatchObject({ code: 'EAI_AGAIN' });
  });

  it('answers a lookup that throws with its error, and asks again for the next connection (DNS resolver faked)', () => {
    let calls = 0;
    const fake = (() => {
      calls++;
      throw Object.assign(new TypeError('The "hostname" argument is invalid'), {
        code: 'ERR_INVALID_ARG_TYPE',
      });
    }) as unknown as typeof dns.lookup;
    const lookup = guardedLookup(PRODUCTION, fake);
    const errors: unknown[] = [];
    lookup('hooks.example.com', { all: true }, (error) => errors.push(error));
    lookup('hooks.example.com', { all: true }, (error) => errors.push(error));
    expect(errors).toMatchObject([{ code: 'ERR_INVALID_ARG_TYPE' }, { code: 'ERR_INVALID_ARG_TYPE' }]);
    expect(calls).toBe(2);
  });

  it('never dials a refused address: the receiver sees no request', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const pool = new Pool(`http://${host}:${port}`, {
        connect: guardedConnector(PRODUCTION, { timeout: 1000 }),
      });
      await expect(pool.request({ method: 'POST', path: '/', body: '{}' })).rejects.toThrow(
        /is a loopback address|resolves to a non-public address/,
      );
      await pool.close();
    }
    expect(requests).toBe(0);
  });

  it('lets an unguarded pool reach the same receiver, so the refusal above is the guard', async () => {
    const pool = new Pool(`http://127.0.0.1:${port}`);
    const response = await pool.request({ method: 'POST', path: '/', body: '{}' });
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    await pool.close();
    expect(requests).toBe(1);
  });

  it('refuses a name that resolves to loopback in staging with WEBHOOK_LOOPBACK off', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(SHARED_STAGING)('localhost', { all: true }, (err) => resolve(err)),
    );
    expect(error?.message).toBe(
      "The webhook URL's host localhost resolves to a non-public address; staging delivers to public addresses only.",
    );
  });

  it('lets staging reach loopback, and never dials a private, link-local or cloud metadata address', async () => {
    const local = new Pool(`http://127.0.0.1:${port}`, {
      connect: guardedConnector(STAGING, { timeout: 1000 }),
    });
    const response = await local.request({ method: 'POST', path: '/', body: '{}' });
    expect(response.statusCode).toBe(200);
    expect(requests).toBe(2);
    await response.body.dump();
    await local.close();
    for (const host of ['10.0.0.1', '169.254.169.254', '169.254.10.1', '[fe80::1]', '[fd00:ec2::254]']) {
      const pool = new Pool(`http://${host}:80`, { connect: guardedConnector(STAGING, { timeout: 1000 }) });
      await expect(pool.request({ method: 'GET', path: '/latest/meta-data/' })).rejects.toThrow(
        /is an? (private|link-local|cloud metadata) address; staging delivers to public and loopback addresses only/,
      );
      await pool.close();
    }
  });
});
