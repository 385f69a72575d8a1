import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { WalletEnv } from '../config.js';
import { DomainError, ValidationError } from '../errors.js';
import { checkWebhookUrl, nonPublicRange } from '../webhooks/url-guard.js';
import { validateWebhookUrl } from './validation.js';

/** 'public', or the range a webhook URL is refused for when saved (else the whole message). */
function onSave(url: string, env: WalletEnv = 'production'): string {
  try {
    expect(validateWebhookUrl(url, env)).toBe(url);
    return 'public';
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    const { message } = error as ValidationError;
    return /^webhookUrl must not point to .+, got .+ \(([^)]+)\)$/.exec(message)?.[1] ?? message;
  }
}

/** The same, for the check the sender runs before each delivery. */
function onSend(url: string, env: WalletEnv = 'production'): string {
  try {
    checkWebhookUrl(url, env);
    return 'public';
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).errorCode).toBe('WEBHOOK_URL_NOT_ALLOWED');
    return /, an? (.+) address;/.exec((error as DomainError).message)?.[1] ?? (error as DomainError).message;
  }
}

/** The same, for the address the connector dials when the host is an IP literal (names go through DNS). */
function onDial(url: string): string | undefined {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? (nonPublicRange(host) ?? 'public') : undefined;
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
        save: 'public',
        send: 'public',
        dial: url.includes('example.com') ? undefined : 'public',
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
    'http://10.0.0.5/h',
    'http://[fc00::1]/h',
    'http://shop.example.com/h',
  ])('accepts %s in both places', (url) => {
    expect({ save: onSave(url, 'staging'), send: onSend(url, 'staging') }).toEqual({
      save: 'public',
      send: 'public',
    });
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://[fd00:ec2::254]/', 'cloud metadata'],
    ['http://169.254.1.1/h', 'link-local'],
    ['http://[fe80::1]/h', 'link-local'],
  ])('refuses %s as %s in both places', (url, range) => {
    expect({ save: onSave(url, 'staging'), send: onSend(url, 'staging') }).toEqual({
      save: range,
      send: range,
    });
  });
});
