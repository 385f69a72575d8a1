/**
 * Where webhooks may go. In production a webhook URL must be https and must not reach the service's
 * own network: the address check runs on every address actually dialled (after DNS), so a name that
 * resolves to a public address when saved and to 127.0.0.1 later (DNS rebinding) is still refused.
 * Staging allows http as well, and loopback where the service runs on a developer's machine, because
 * merchants develop against http://localhost; nothing else that is not public: anyone can open a staging
 * account, and the instant answer of a test webhook would otherwise let them map the service's network
 * (or, through loopback, the ports of the machine itself). An operator may open other non-public
 * networks (WEBHOOK_ALLOWED_NETWORKS) in either environment, but never link-local addresses or the cloud
 * metadata services, which hand out the machine's credentials.
 */
import dns from 'node:dns';
import net from 'node:net';
import { buildConnector } from 'undici';
import type { Config, WalletEnv } from '../config.js';
import { DomainError } from '../errors.js';

type Range = readonly [address: string, prefix: number];

/** Ranges that are not the public internet, by the name used in error messages (IANA special registries). */
const V4_RANGES: Record<string, Range[]> = {
  // First, so that it names these addresses rather than the ranges that hold them.
  'cloud metadata': [
    ['169.254.169.254', 32],
    ['100.100.100.200', 32],
    // Azure's host endpoint (WireServer), a public address that only the machine's host answers.
    ['168.63.129.16', 32],
  ],
  unspecified: [['0.0.0.0', 8]],
  private: [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
  ],
  'carrier-grade NAT': [['100.64.0.0', 10]],
  loopback: [['127.0.0.0', 8]],
  'link-local': [['169.254.0.0', 16]],
  reserved: [
    ['192.0.0.0', 24],
    ['192.88.99.0', 24],
    ['198.18.0.0', 15],
    ['240.0.0.0', 4],
  ],
  documentation: [
    ['192.0.2.0', 24],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
  ],
  multicast: [['224.0.0.0', 4]],
};

const V6_RANGES: Record<string, Range[]> = {
  'cloud metadata': [['fd00:ec2::254', 128]],
  // ::/96 holds :: (unspecified), ::1 (loopback) and the deprecated IPv4-compatible addresses.
  unspecified: [['::', 128]],
  loopback: [['::1', 128]],
  reserved: [
    ['::', 96],
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['2001::', 23],
    ['5f00::', 16],
    ['fec0::', 10],
  ],
  private: [['fc00::', 7]],
  'link-local': [['fe80::', 10]],
  documentation: [
    ['2001:db8::', 32],
    ['3fff::', 20],
  ],
  multicast: [['ff00::', 8]],
};

function blockLists(): Array<[label: string, list: net.BlockList]> {
  const lists = new Map<string, net.BlockList>();
  const add = (ranges: Record<string, Range[]>, family: 'ipv4' | 'ipv6') => {
    for (const [label, entries] of Object.entries(ranges)) {
      const list = lists.get(label) ?? new net.BlockList();
      for (const [address, prefix] of entries) list.addSubnet(address, prefix, family);
      lists.set(label, list);
    }
  };
  add(V4_RANGES, 'ipv4');
  add(V6_RANGES, 'ipv6');
  return [...lists];
}

const BLOCK_LISTS = blockLists();

/**
 * IPv6 forms that carry an IPv4 address the packet ends up at: NAT64 (64:ff9b::/96, last 32 bits),
 * SIIT's IPv4-translated addresses (::ffff:0:0:0/96, last 32 bits) and 6to4 (2002::/16, bits 16–47).
 * IPv4-mapped addresses (::ffff:a.b.c.d) need no entry: net.BlockList already matches them against the
 * IPv4 ranges. IPv4-compatible (::a.b.c.d), Teredo (2001::/32) and local-use NAT64 (64:ff9b:1::/48)
 * are refused whole by the ranges above.
 */
function embeddedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (groups === undefined) return undefined;
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  const nat64 = g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0;
  const translated = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0;
  if (nat64 || translated) return ipv4FromGroups(g6, g7);
  if (g0 === 0x2002) return ipv4FromGroups(g1 ?? 0, g2 ?? 0);
  return undefined;
}

function ipv4FromGroups(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** The eight 16-bit groups of an IPv6 address, or undefined if it is not one. */
function expandIpv6(address: string): number[] | undefined {
  if (!net.isIPv6(address)) return undefined;
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a, b, c, d] = dotted[1].split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}

/**
 * The name of the non-public range `address` is in ('loopback', 'private', …), or undefined for a
 * public address. Accepts IPv4, IPv6 and IPv4-mapped IPv6 text; an IPv6 address that carries an IPv4 one
 * is judged as that IPv4 address, and any other outside 2000::/3 is reserved.
 */
export function nonPublicRange(address: string): string | undefined {
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : undefined;
  if (family === undefined) return 'invalid';
  // One parsed address for every list: given the text, each list parses it anew. 7.5 µs → 2.2 µs a check
  // of a loopback URL, once per webhook attempt.
  const parsed = new net.SocketAddress({ address, family });
  for (const [label, list] of BLOCK_LISTS) {
    if (list.check(parsed)) return label;
  }
  if (family === 'ipv4') return undefined;
  const carried = carriedIpv4(address);
  if (carried !== undefined) return nonPublicRange(carried);
  // Outside 2000::/3 every IPv6 address not named above is reserved by the IETF, not routed on the internet.
  return GLOBAL_UNICAST.check(parsed) ? undefined : 'reserved';
}

const GLOBAL_UNICAST = new net.BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/**
 * The non-public range a URL's host names before any DNS lookup: that of a literal IP address (with or
 * without brackets), or 'loopback' for `localhost` and its subdomains (RFC 6761), with or without the
 * final dot. Undefined for any other name: it is judged on the addresses it resolves to when dialled
 * (`guardedLookup`), so a name cannot pass here and reach a private address later.
 */
export function nonPublicHost(hostname: string): string | undefined {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback';
  return net.isIP(host) ? nonPublicRange(host) : undefined;
}

const MACHINE_LOOPBACK = new net.BlockList();
MACHINE_LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
MACHINE_LOOPBACK.addAddress('::1', 'ipv6');
MACHINE_LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/**
 * Whether a host name or address is this machine's own loopback: `localhost` and its subdomains (with or
 * without the final dot), 127.0.0.0/8, ::1 and the IPv4-mapped form of 127.0.0.0/8. Not the forms that
 * only carry a loopback address (NAT64, 6to4), which reach another machine if they reach one at all.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const family = net.isIPv4(host) ? 'ipv4' : net.isIPv6(host) ? 'ipv6' : undefined;
  return family !== undefined && MACHINE_LOOPBACK.check(host, family);
}

/**
 * Ranges no allowed network opens: the machine's cloud provider and its credentials (metadata,
 * link-local), and the machine itself (loopback, which only WEBHOOK_LOOPBACK opens, in staging, and
 * unspecified, which dials it).
 */
const NEVER_OPENED = ['unspecified', 'loopback', 'cloud metadata', 'link-local'];

/** The machine's own ranges among them: an allowed block may not even overlap one. */
const THE_MACHINE = ['loopback', 'unspecified'];

/** Each never-opened range, with a list that holds it, to check the allowed blocks against. */
const NEVER_OPENED_RANGES = NEVER_OPENED.flatMap((label) =>
  [...(V4_RANGES[label] ?? []), ...(V6_RANGES[label] ?? [])].map(([address, prefix]) => {
    const family = net.isIPv4(address) ? ('ipv4' as const) : ('ipv6' as const);
    const list = new net.BlockList();
    list.addSubnet(address, prefix, family);
    return { label, address, prefix, family, list };
  }),
);

/**
 * Why an allowed block cannot be: it overlaps the machine's own addresses (`0.0.0.0/0` would open them),
 * or lies wholly inside a range that is never opened, where it would open nothing. A block that merely
 * holds a metadata address (`fd00::/8` holds `fd00:ec2::254`) is fine: that address stays refused.
 */
function wrongBlock(block: AddressBlock): string | undefined {
  const own = new net.BlockList();
  own.addSubnet(block.address, block.prefix, block.family);
  for (const range of NEVER_OPENED_RANGES) {
    if (range.family !== block.family) continue;
    const inside = range.list.check(block.address, block.family) && block.prefix >= range.prefix;
    const overlaps = inside || own.check(range.address, range.family);
    if (THE_MACHINE.includes(range.label) ? overlaps : inside) {
      return `covers ${anAddress(range.label)} (${range.address})`;
    }
  }
  return undefined;
}

/**
 * IPv6 forms that carry an IPv4 address `embeddedIpv4` cannot read (IPv4-compatible, local-use NAT64,
 * Teredo): an allowed block never opens them, whatever address they carry.
 */
const OPAQUE_IPV4_CARRIERS = new net.BlockList();
OPAQUE_IPV4_CARRIERS.addSubnet('::', 96, 'ipv6');
OPAQUE_IPV4_CARRIERS.addSubnet('64:ff9b:1::', 48, 'ipv6');
OPAQUE_IPV4_CARRIERS.addSubnet('2001::', 32, 'ipv6');

/** The IPv4 address an IPv6 one carries and reaches (IPv4-mapped, SIIT, NAT64, 6to4), if any. */
function carriedIpv4(address: string): string | undefined {
  const groups = expandIpv6(address);
  if (groups?.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return ipv4FromGroups(groups[6] ?? 0, groups[7] ?? 0);
  }
  return embeddedIpv4(address);
}

/**
 * The addresses webhooks may be delivered to: public ones; loopback too in staging when `loopback` says
 * so (a caller with a configuration passes its `webhookLoopback`); and the non-public
 * networks the operator allowed (CIDR blocks, `10.0.0.0/8` or `fd00::/8`), which may not overlap a range
 * of NEVER_OPENED. A block opens addresses of its own family: an IPv6 address that carries an IPv4 one
 * is judged by the IPv4 blocks. Plain data crosses to the delivery worker threads, which build their own.
 */
export class WebhookDestinations {
  readonly env: WalletEnv;
  readonly allowedNetworks: readonly string[];
  readonly loopback: boolean;
  /** What a refusal says is allowed. */
  readonly rule: string;
  readonly #allowedV4 = new net.BlockList();
  readonly #allowedV6 = new net.BlockList();

  /** Throws an Error naming the entry and the rule when an allowed network is not a block, or not one it may open. */
  constructor(env: WalletEnv, options: { allowedNetworks?: readonly string[]; loopback: boolean }) {
    const { allowedNetworks = [] } = options;
    this.env = env;
    this.allowedNetworks = allowedNetworks;
    this.loopback = env === 'staging' && options.loopback;
    for (const network of allowedNetworks) {
      const block = parseNetwork(network);
      if (block === undefined) throw new Error(`"${network}" is not an address block such as 10.0.0.0/8`);
      const wrong = wrongBlock(block);
      if (wrong !== undefined) {
        throw new Error(
          `"${network}" ${wrong}; allowed networks never open unspecified, link-local or cloud metadata addresses, nor loopback (WEBHOOK_LOOPBACK does, in staging)`,
        );
      }
      (block.family === 'ipv4' ? this.#allowedV4 : this.#allowedV6).addSubnet(
        block.address,
        block.prefix,
        block.family,
      );
    }
    const where = this.loopback ? 'public and loopback addresses' : 'public addresses';
    const opened = allowedNetworks.length > 0 ? ' and the networks the operator allowed' : '';
    this.rule = `${env} delivers to ${where}${opened} only`;
  }

  /** The non-public range that keeps webhooks from `address`, or undefined when they may go there. */
  refusedRange(address: string): string | undefined {
    const range = nonPublicRange(address);
    if (range === undefined) return undefined;
    if (this.loopback && range === 'loopback') return undefined;
    if (NEVER_OPENED.includes(range)) return range;
    return this.#opens(address) ? undefined : range;
  }

  /** Whether an allowed block of the address's own family holds it. */
  #opens(address: string): boolean {
    if (net.isIPv4(address)) return this.#allowedV4.check(address, 'ipv4');
    const ipv4 = carriedIpv4(address);
    if (ipv4 !== undefined) return this.#allowedV4.check(ipv4, 'ipv4');
    return !OPAQUE_IPV4_CARRIERS.check(address, 'ipv6') && this.#allowedV6.check(address, 'ipv6');
  }

  /**
   * The same for a URL's host before any lookup: a literal IP address (with or without brackets), or
   * `localhost` and its subdomains (RFC 6761), judged as 127.0.0.1. Undefined for any other name: it is
   * judged on the addresses it resolves to when dialled (`guardedLookup`).
   */
  refusedHost(hostname: string): string | undefined {
    const range = nonPublicHost(hostname);
    if (range === undefined) return undefined;
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    return this.refusedRange(net.isIP(host) ? host : '127.0.0.1');
  }
}

/** The destinations a configuration allows (WALLET_ENV, WEBHOOK_ALLOWED_NETWORKS, WEBHOOK_LOOPBACK). */
export function configuredDestinations(
  config: Pick<Config, 'env' | 'webhookAllowedNetworks' | 'webhookLoopback'>,
): WebhookDestinations {
  return new WebhookDestinations(config.env, {
    allowedNetworks: config.webhookAllowedNetworks,
    loopback: config.webhookLoopback,
  });
}

export interface AddressBlock {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** An address block in CIDR notation, `10.0.0.0/8` or `fd00::/8` (a bare address is a block of one), or undefined. */
export function parseNetwork(text: string): AddressBlock | undefined {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  const version = net.isIP(address);
  const bits = version === 4 ? 32 : 128;
  if (version === 0 || rest.length > 0 || !/^\d{1,3}$/.test(prefixText ?? `${bits}`)) return undefined;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  return prefix > bits ? undefined : { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** 'a private address', 'an unspecified address'. */
export function anAddress(range: string): string {
  return `${/^[aeiou]/.test(range) ? 'an' : 'a'} ${range} address`;
}

function refusal(host: string, range: string, destinations: WebhookDestinations): DomainError {
  return new DomainError(
    'WEBHOOK_URL_NOT_ALLOWED',
    `The webhook URL's host ${host} is ${anAddress(range)}; ${destinations.rule}.`,
  );
}

/**
 * A name's addresses are not the merchant's to learn: the refusal says only that it resolves to a
 * non-public one, and an operator can resolve it for themselves.
 */
function resolvedRefusal(hostname: string, destinations: WebhookDestinations): DomainError {
  return new DomainError(
    'WEBHOOK_URL_NOT_ALLOWED',
    `The webhook URL's host ${hostname} resolves to a non-public address; ${destinations.rule}.`,
  );
}

/**
 * Checks a webhook URL's syntax and scheme (https in production), and that it names no address
 * `destinations` refuses. Names are checked at connect time, see `guardedConnector`.
 */
export function checkWebhookUrl(url: string, destinations: WebhookDestinations): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DomainError('WEBHOOK_URL_NOT_ALLOWED', 'The webhook URL must be an absolute http(s) URL.');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new DomainError('WEBHOOK_URL_NOT_ALLOWED', 'The webhook URL must use http or https.');
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new DomainError(
      'WEBHOOK_URL_NOT_ALLOWED',
      'The webhook URL must not contain a user name or password.',
    );
  }
  if (destinations.env === 'production' && parsed.protocol !== 'https:') {
    throw new DomainError('WEBHOOK_URL_NOT_ALLOWED', 'The webhook URL must use https in production.');
  }
  const range = destinations.refusedHost(parsed.hostname);
  if (range !== undefined) {
    throw refusal(parsed.hostname.replace(/^\[(.*)\]$/, '$1'), range, destinations);
  }
  return parsed;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

type AddressesCallback = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;

/**
 * A `dns.lookup` for net/tls connect options that drops the addresses `destinations` refuses; it fails
 * when none is left. Node calls it with `all: true` when it tries several addresses (happy eyeballs).
 *
 * Lookups of a name that overlap share one call of `lookup`, so one of these should serve every connection
 * a thread opens (a Sender's pools share one). `dns.lookup` is getaddrinfo on libuv's pool of threads (4
 * unless UV_THREADPOOL_SIZE says otherwise), which the process's file work shares: a receiver whose DNS
 * server does not answer would otherwise hold a thread for each connection its deliveries open (up to 32),
 * for as long as the resolver waits (10 s and more), and every lookup and file read of the process behind
 * them.
 */
export function guardedLookup(destinations: WebhookDestinations, lookup: typeof dns.lookup = dns.lookup) {
  const inFlight = new Map<string, AddressesCallback[]>();
  const resolveShared = (hostname: string, options: dns.LookupOptions, done: AddressesCallback) => {
    // What net and undici pass: family and hints (never `order` or `verbatim`, left to their defaults).
    const key = `${options.family ?? 0} ${options.hints ?? 0} ${hostname}`;
    const waiting = inFlight.get(key);
    if (waiting !== undefined) {
      waiting.push(done);
      return;
    }
    const callbacks = [done];
    inFlight.set(key, callbacks);
    const answer = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => {
      inFlight.delete(key);
      for (const callback of callbacks) callback(error, addresses);
    };
    try {
      lookup(hostname, { ...options, all: true }, answer);
    } catch (error) {
      answer(error as NodeJS.ErrnoException, []);
    }
  };
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolveShared(hostname, options, (error, addresses) => {
      if (error) {
        callback(error, []);
        return;
      }
      const allowed = addresses.filter((entry) => destinations.refusedRange(entry.address) === undefined);
      const first = allowed[0];
      if (first === undefined) {
        callback(resolvedRefusal(hostname, destinations), []);
        return;
      }
      if (options.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * An undici connector that dials only what `destinations` allows: IP literals are checked before
 * dialling, names are resolved by `guardedLookup` (`lookup`, shared by the connectors of one thread), so
 * the address the socket connects to is always one that passed.
 */
export function guardedConnector(
  destinations: WebhookDestinations,
  options: buildConnector.BuildOptions = {},
  lookup: ReturnType<typeof guardedLookup> = guardedLookup(destinations),
): buildConnector.connector {
  const connect = buildConnector({ ...options, lookup });
  return (target, callback) => {
    const range = net.isIP(target.hostname) ? destinations.refusedRange(target.hostname) : undefined;
    if (range !== undefined) {
      callback(refusal(target.hostname, range, destinations), null);
      return;
    }
    connect(target, callback);
  };
}
