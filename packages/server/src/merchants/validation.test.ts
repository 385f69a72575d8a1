import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DomainError, ValidationError } from '../errors.js';
import { checkWebhookUrl, WebhookDestinations } from '../webhooks/url-guard.js';
import { validateAllowedOrigins, validateShippingMethods, validateWebhookUrl } from './validation.js';

const PRODUCTION = new WebhookDestinations('production', { loopback: false });
const STAGING = new WebhookDestinations('staging', { loopback: true });

/** 'allowed', or the range a webhook URL is refused for when saved (else the whole message). */
function onSave(url: string, destinations = PRODUCTION): string {
  try {
    expect(validateWebhookUrl(url, destinations)).toBe(url);
    return 'allowed';
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    const { message } = error as ValidationError;
    return /^webhookUrl must not point to an? (.+) address \(.+\), got .+$/.exec(message)?.[1] ?? message;
  }
}

/** The same, for the check the sender runs before each delivery. */
function onSend(url: string, destinations = PRODUCTION): string {
  try {
    checkWebhookUrl(url, destinations);
    return 'allowed';
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).errorCode).toBe('WEBHOOK_URL_NOT_ALLOWED');
    const { message } = error as DomainError;
    return / is an? (.+) address; /.exec(message)?.[1] ?? message;
  }
}

/** The same, for the address the connector dials when the host is an IP literal (names go through DNS). */
function onDial(url: string, destinations = PRODUCTION): string | undefined {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? (destinations.refusedRange(host) ?? 'allowed') : undefined;
}

describe('production webhook URLs: saved and delivered alike', () => {
  const PUBLIC = [
    'https://8.8.8.8/h',
    'https://1.1.1.1/h',
    'https://172.32.0.1/h',
    'https://100.128.0.1/h',
    'https://[2606:4700:4700::1111]/h',
    'https://[::ffff:8.8.8.8]/h',
    'https://[64:ff9b::8.8.8.8]/h',
    'https://[2002:808:808::1]/h',
    'https://shop.example.com/h',
  ];

  it('accepts public IP literals and names in both places', () => {
    for (const url of PUBLIC) {
      expect({ url, save: onSave(url), send: onSend(url), dial: onDial(url) }).toEqual({
        url,
        save: 'allowed',
        send: 'allowed',
        dial: url.includes('example.com') ? undefined : 'allowed',
      });
    }
  });

  it.each([
    ['https://0/h', 'unspecified'],
    ['https://0.1.2.3/h', 'unspecified'],
    ['https://10.0.0.1/h', 'private'],
    ['https://100.64.0.1/h', 'carrier-grade NAT'],
    ['https://127.0.0.1/h', 'loopback'],
    ['https://2130706433/h', 'loopback'],
    ['https://169.254.169.254/h', 'cloud metadata'],
    ['https://172.16.0.1/h', 'private'],
    ['https://192.0.0.8/h', 'reserved'],
    ['https://192.0.2.1/h', 'documentation'],
    ['https://192.88.99.1/h', 'reserved'],
    ['https://192.168.1.1/h', 'private'],
    ['https://198.19.0.1/h', 'reserved'],
    ['https://198.51.100.1/h', 'documentation'],
    ['https://203.0.113.1/h', 'documentation'],
    ['https://224.0.0.1/h', 'multicast'],
    ['https://240.0.0.1/h', 'reserved'],
    ['https://255.255.255.255/h', 'reserved'],
    ['https://[::]/h', 'unspecified'],
    ['https://[::1]/h', 'loopback'],
    ['https://[fc00::1]/h', 'private'],
    ['https://[fd12:3456::1]/h', 'private'],
    ['https://[fe80::1]/h', 'link-local'],
    ['https://[ff02::1]/h', 'multicast'],
    ['https://[2001:db8::1]/h', 'documentation'],
    // IPv6 forms of an IPv4 address: mapped, compatible, SIIT-translated, NAT64, 6to4; Teredo.
    ['https://[::ffff:127.0.0.1]/h', 'loopback'],
    ['https://[::ffff:10.0.0.1]/h', 'private'],
    ['https://[::127.0.0.1]/h', 'reserved'],
    ['https://[::ffff:0:127.0.0.1]/h', 'loopback'],
    ['https://[64:ff9b::a00:1]/h', 'private'],
    ['https://[64:ff9b::127.0.0.1]/h', 'loopback'],
    ['https://[64:ff9b:1::808:808]/h', 'reserved'],
    ['https://[2002:a00:1::]/h', 'private'],
    ['https://[2002:a9fe:a9fe::1]/h', 'cloud metadata'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/h', 'reserved'],
    // Names that never leave the machine; other names are judged on the address dialled.
    ['https://localhost/h', 'loopback'],
    ['https://LOCALHOST:8443/h', 'loopback'],
    ['https://localhost./h', 'loopback'],
    ['https://api.localhost./h', 'loopback'],
  ])('refuses %s as %s in both places', (url, range) => {
    expect({ save: onSave(url), send: onSend(url), dial: onDial(url) }).toEqual({
      save: range,
      send: range,
      dial: /localhost/i.test(url) ? undefined : range,
    });
  });
});

describe('staging webhook URLs: saved and delivered alike', () => {
  it.each([
    'http://localhost:3000/h',
    'http://127.0.0.1:9/h',
    'http://[::1]:9/h',
    'http://shop.example.com/h',
    'https://8.8.8.8/h',
  ])('accepts %s in both places', (url) => {
    expect({ save: onSave(url, STAGING), send: onSend(url, STAGING), dial: onDial(url, STAGING) }).toEqual({
      save: 'allowed',
      send: 'allowed',
      dial: /localhost|example/.test(url) ? undefined : 'allowed',
    });
  });

  // Anyone can open a staging account: what its webhooks reach, they can map.
  it.each([
    ['http://10.0.0.5/h', 'private'],
    ['http://192.168.1.1/h', 'private'],
    ['http://100.64.0.1/h', 'carrier-grade NAT'],
    ['http://192.0.0.9/h', 'reserved'],
    ['http://168.63.129.16/h', 'cloud metadata'],
    ['http://[fc00::1]/h', 'private'],
    ['http://[::a9fe:a9fe]/h', 'reserved'],
    ['http://[::127.0.0.1]/h', 'reserved'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://[fd00:ec2::254]/', 'cloud metadata'],
    ['http://169.254.1.1/h', 'link-local'],
    ['http://[fe80::1]/h', 'link-local'],
  ])('refuses %s as %s in both places', (url, range) => {
    expect({ save: onSave(url, STAGING), send: onSend(url, STAGING), dial: onDial(url, STAGING) }).toEqual({
      save: range,
      send: range,
      dial: range,
    });
  });
});

describe('networks the operator allowed (WEBHOOK_ALLOWED_NETWORKS)', () => {
  const staging = new WebhookDestinations('staging', {
    allowedNetworks: ['10.20.0.0/16', 'fd00:1::/32', '192.168.1.7'],
    loopback: true,
  });
  const production = new WebhookDestinations('production', {
    allowedNetworks: ['10.20.0.0/16'],
    loopback: false,
  });

  it('opens those networks, and no address beside them', () => {
    expect(
      ['http://10.20.3.4/h', 'http://[fd00:1::5]/h', 'http://192.168.1.7/h'].map((url) =>
        onSave(url, staging),
      ),
    ).toEqual(['allowed', 'allowed', 'allowed']);
    expect(
      ['http://10.21.0.1/h', 'http://[fd00:2::5]/h', 'http://192.168.1.8/h'].map((url) =>
        onSend(url, staging),
      ),
    ).toEqual(['private', 'private', 'private']);
    expect(onDial('http://[::ffff:10.20.0.9]/h', staging)).toBe('allowed');
  });

  it('opens them in production too, over https, and leaves loopback closed there', () => {
    expect(onSave('https://10.20.0.9/h', production)).toBe('allowed');
    expect(onSend('https://10.20.0.9/h', production)).toBe('allowed');
    expect(onSend('https://127.0.0.1/h', production)).toBe('loopback');
    expect(onSave('http://10.20.0.9/h', production)).toBe('webhookUrl must use https in production');
  });

  it('refuses blocks that overlap the machine itself, or would open only what is never opened', () => {
    for (const [block, covered] of [
      ['0.0.0.0/0', 'an unspecified address (0.0.0.0)'],
      ['::/0', 'an unspecified address (::)'],
      ['127.5.0.0/16', 'a loopback address (127.0.0.0)'],
      ['::1', 'a loopback address (::1)'],
      ['169.254.128.0/17', 'a link-local address (169.254.0.0)'],
      ['168.63.129.16/32', 'a cloud metadata address (168.63.129.16)'],
      ['fe80::/64', 'a link-local address (fe80::)'],
    ]) {
      expect(
        () => new WebhookDestinations('production', { allowedNetworks: [block as string], loopback: false }),
      ).toThrow(
        `"${block}" covers ${covered}; allowed networks never open unspecified, link-local or cloud metadata addresses, nor loopback (WEBHOOK_LOOPBACK does, in staging)`,
      );
    }
  });

  it('opens addresses of its own family only, and IPv4 carried in IPv6 by the IPv4 blocks', () => {
    const v6 = new WebhookDestinations('production', {
      allowedNetworks: ['2000::/3', 'fc00::/7'],
      loopback: false,
    });
    expect(onSend('https://10.0.0.1/h', v6)).toBe('private');
    expect(onSend('https://[::ffff:10.0.0.1]/h', v6)).toBe('private');
    expect(onSend('https://[fd00:1::1]/h', v6)).toBe('allowed');
    // A block may hold a metadata address, which stays refused.
    expect(onSend('https://[fd00:ec2::254]/h', v6)).toBe('cloud metadata');
    expect(
      onSend(
        'https://168.63.129.16/h',
        new WebhookDestinations('production', { allowedNetworks: ['168.63.0.0/16'], loopback: false }),
      ),
    ).toBe('cloud metadata');
    // Teredo and local-use NAT64 carry an IPv4 address no block can judge: never opened.
    expect(onSend('https://[2001::a9fe:a9fe]/h', v6)).toBe('reserved');
    expect(
      onSend(
        'https://[64:ff9b:1::a9fe:a9fe]/h',
        new WebhookDestinations('production', { allowedNetworks: ['64:ff9b:1::/48'], loopback: false }),
      ),
    ).toBe('reserved');
    const v4 = new WebhookDestinations('production', { allowedNetworks: ['10.0.0.0/8'], loopback: false });
    expect(onSend('https://[::ffff:10.0.0.1]/h', v4)).toBe('allowed');
    expect(onSend('https://[64:ff9b::10.0.0.1]/h', v4)).toBe('allowed');
    expect(onSend('https://[::10.0.0.1]/h', v4)).toBe('reserved');
  });

  it('says in a refusal what is allowed', () => {
    expect(() => checkWebhookUrl('http://10.21.0.1/h', staging)).toThrow(
      "The webhook URL's host 10.21.0.1 is a private address; staging delivers to public and loopback addresses and the networks the operator allowed only.",
    );
    expect(() => validateWebhookUrl('https://[::]/h', PRODUCTION)).toThrow(
      'webhookUrl must not point to an unspecified address (production delivers to public addresses only), got "[::]"',
    );
  });
});

describe('shipping methods given without an externalId', () => {
  it('are named after themselves, so setting the same list again keeps their ids', () => {
    const list = [
      { name: 'Ground', price: 500 },
      { name: ' Next day (by 10am) ', price: 2500 },
      { name: 'ground!', price: 700 },
      { name: 'Éclair', price: 0 },
      { name: '速達', price: 900 },
      { name: ' 速達 ', price: 950 },
      { name: 'Pickup', price: 0, externalId: 'store_pickup' },
      { name: 'Eclair', price: 100 },
      { name: 'Other', price: 0, externalId: 'eclair-2' },
    ];
    const ids = validateShippingMethods(list).map((method) => method.externalId);
    expect(ids.slice(0, 4)).toEqual(['ground', 'next-day-by-10am', 'ground-2', 'eclair']);
    expect(ids[4]).toMatch(/^m-[0-9a-f]{16}$/);
    expect(ids[5]).toBe(`${ids[4]}-2`);
    expect(ids.slice(6)).toEqual(['store_pickup', 'eclair-3', 'eclair-2']);
    expect(validateShippingMethods(list).map((method) => method.externalId)).toEqual(ids);
  });
});

describe('allowed origins', () => {
  it('keep each origin as the browser sends it: lower case, punycode, no default port', () => {
    expect(
      validateAllowedOrigins(
        ['HTTPS://Shop.Example:443', 'https://bücher.example', 'http://localhost:8000', 'https://[::1]:8443'],
        'staging',
      ),
    ).toEqual([
      'https://shop.example',
      'https://xn--bcher-kva.example',
      'http://localhost:8000',
      'https://[::1]:8443',
    ]);
  });

  it('refuse a wildcard or a character a Content Security Policy would read as more than a host', () => {
    for (const origin of [
      'https://*',
      'https://*.shop.example',
      'https://a.example;script-src',
      'https://a.example,b.example',
      "https://a.example'",
      'https://under_score.example',
      'https://-dash.example',
    ]) {
      expect(() => validateAllowedOrigins([origin], 'production'), origin).toThrow(
        `allowedOrigins[0] must be scheme://host[:port] with an http or https scheme, a host of letters, digits, hyphens and dots (no wildcard) and no path, got ${JSON.stringify(origin)}`,
      );
    }
  });
});
