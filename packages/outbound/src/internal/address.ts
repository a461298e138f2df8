import { isIPv4, isIPv6 } from 'node:net';

/** How an address may be used as an outbound target. */
export type AddressClass = 'public' | 'private' | 'metadata';

/** An address's class and the name of the range it lies in ('loopback', 'CGNAT', …), for messages. */
export interface Classification {
  readonly kind: AddressClass;
  readonly range: string;
}

type V4Range = readonly [base: number, bits: number, name: string];

const v4 = (dotted: string): number => {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
};
const cidr4 = (text: string, name: string): V4Range => {
  const [base = '', bits = '32'] = text.split('/');
  return [v4(base), Number(bits), name];
};
const inV4 = (n: number, [base, bits]: V4Range) => bits === 0 || n >>> (32 - bits) === base >>> (32 - bits);

// Cloud instance-metadata and platform endpoints: blocked even when private targets are allowed.
const METADATA_V4 = [
  '169.254.169.0/24', // AWS, GCP, Azure, OpenStack, DigitalOcean, Hetzner… (169.254.169.254 and its neighbours)
  '169.254.170.0/24', // AWS ECS task metadata, EKS pod identity
  '169.254.0.23/32', // Tencent Cloud
  '100.100.100.200/32', // Alibaba Cloud
  '192.0.0.192/32', // Oracle Cloud
  '168.63.129.16/32', // Azure wire server
].map((text) => cidr4(text, 'metadata'));

// Everything that is not globally routable unicast (IANA special-purpose registry).
const NON_PUBLIC_V4 = [
  cidr4('0.0.0.0/8', 'unspecified'), // "this network"
  cidr4('10.0.0.0/8', 'private'),
  cidr4('100.64.0.0/10', 'CGNAT'),
  cidr4('127.0.0.0/8', 'loopback'),
  cidr4('169.254.0.0/16', 'link-local'),
  cidr4('172.16.0.0/12', 'private'),
  cidr4('192.0.0.0/24', 'reserved'), // IETF protocol assignments
  cidr4('192.0.2.0/24', 'documentation'),
  cidr4('192.88.99.0/24', 'reserved'), // deprecated 6to4 relay anycast
  cidr4('192.168.0.0/16', 'private'),
  cidr4('198.18.0.0/15', 'reserved'), // benchmarking
  cidr4('198.51.100.0/24', 'documentation'),
  cidr4('203.0.113.0/24', 'documentation'),
  cidr4('224.0.0.0/4', 'multicast'),
  cidr4('240.0.0.0/4', 'reserved'), // and broadcast
];

const LINK_LOCAL_V4 = cidr4('169.254.0.0/16', 'link-local');

/** Stricter rules a caller may ask for. */
export interface AddressRules {
  /**
   * All of IPv4 link-local (169.254/16, also inside IPv6 forms) counts as metadata, not only the
   * known endpoints: providers keep adding services there. The scraper, which fetches URLs
   * that users name, asks for this.
   */
  readonly linkLocalIsMetadata?: boolean;
}

const PUBLIC: Classification = { kind: 'public', range: 'public' };
const NOT_AN_ADDRESS: Classification = { kind: 'private', range: 'not an address' };

function classifyV4(n: number, rules: AddressRules): Classification {
  if (METADATA_V4.some((r) => inV4(n, r))) return { kind: 'metadata', range: 'metadata' };
  if (rules.linkLocalIsMetadata && inV4(n, LINK_LOCAL_V4)) return { kind: 'metadata', range: 'link-local' };
  const range = NON_PUBLIC_V4.find((r) => inV4(n, r));
  return range ? { kind: 'private', range: range[2] } : PUBLIC;
}

/** 16 bytes of an IPv6 address (zone already removed), or null if it does not parse. */
function parseV6(text: string): number[] | null {
  let s = text;
  let tail: number[] = [];
  const dotted = s.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    if (!isIPv4(dotted[2]!)) return null;
    const n = v4(dotted[2]!);
    tail = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
    s = `${dotted[1]}0:0`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    const v = Number.parseInt(g, 16);
    bytes.push(v >> 8, v & 255);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

const startsWith = (bytes: readonly number[], prefix: readonly number[], bits: number) => {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((bytes[byte]! & mask) !== (prefix[byte]! & mask)) return false;
  }
  return true;
};

type V6Prefix = readonly [bytes: number[], bits: number, name: string];

const prefix6 = (text: string, name: string): V6Prefix => {
  const [base = '', bits = '128'] = text.split('/');
  return [parseV6(base)!, Number(bits), name];
};
const METADATA_V6 = [prefix6('fd00:ec2::/32', 'metadata')]; // AWS IMDS (fd00:ec2::254), DNS, NTP
// Inside ::/96 below, but better named by what they are.
const LOOPBACK_OR_UNSPECIFIED = [prefix6('::1/128', 'loopback'), prefix6('::/128', 'unspecified')];
const MAPPED = prefix6('::ffff:0:0/96', 'IPv4-mapped');
const NAT64 = prefix6('64:ff9b::/96', 'NAT64');
// Deprecated tunnelling and local translation forms: never public. Local-use NAT64 (RFC 8215)
// may carry the IPv4 address at another offset.
const EMBEDDING_V4_AT_12 = [prefix6('::/96', 'IPv4-compatible'), prefix6('64:ff9b:1::/48', 'NAT64')];
const SIX_TO_FOUR = prefix6('2002::/16', '6to4');
const GLOBAL_UNICAST = prefix6('2000::/3', 'public');
const NON_PUBLIC_IN_GLOBAL = [
  prefix6('2001::/23', 'reserved'), // IETF protocol assignments: Teredo, benchmarking, ORCHID…
  prefix6('2001:db8::/32', 'documentation'),
  prefix6('3fff::/20', 'documentation'),
];
// Outside 2000::/3: named where a message can say more than "reserved".
const OUTSIDE_GLOBAL = [
  prefix6('fc00::/7', 'private'), // unique local
  prefix6('fe80::/10', 'link-local'),
  prefix6('fec0::/10', 'private'), // deprecated site-local
  prefix6('ff00::/8', 'multicast'),
];

const embeddedV4 = (bytes: readonly number[], at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;

function classifyV6(bytes: number[], rules: AddressRules): Classification {
  const find = (ranges: readonly V6Prefix[]) => ranges.find(([p, b]) => startsWith(bytes, p, b));
  if (find(METADATA_V6)) return { kind: 'metadata', range: 'metadata' };
  const local = find(LOOPBACK_OR_UNSPECIFIED);
  if (local) return { kind: 'private', range: local[2] };
  // Translated addresses reach the embedded IPv4 address: judge that one.
  if (find([MAPPED, NAT64])) return classifyV4(embeddedV4(bytes, 12), rules);
  // Never public, but still metadata if they point there.
  const tunnel = find(EMBEDDING_V4_AT_12) ?? find([SIX_TO_FOUR]);
  if (tunnel) {
    const inner = classifyV4(embeddedV4(bytes, tunnel === SIX_TO_FOUR ? 2 : 12), rules);
    return inner.kind === 'metadata' ? inner : { kind: 'private', range: tunnel[2] };
  }
  if (!find([GLOBAL_UNICAST])) return { kind: 'private', range: find(OUTSIDE_GLOBAL)?.[2] ?? 'reserved' };
  const reserved = find(NON_PUBLIC_IN_GLOBAL);
  return reserved ? { kind: 'private', range: reserved[2] } : PUBLIC;
}

/**
 * Classifies a literal IPv4 or IPv6 address (brackets and a `%zone` are accepted) and names its
 * range. Anything that does not parse as an address is 'private', so callers fail closed.
 */
export function classify(ip: string, rules: AddressRules = {}): Classification {
  const text = bare(ip);
  if (isIPv4(text)) return classifyV4(v4(text), rules);
  if (!isIPv6(text)) return NOT_AN_ADDRESS;
  const bytes = parseV6(text);
  return bytes ? classifyV6(bytes, rules) : NOT_AN_ADDRESS;
}

/** The class of a literal IPv4 or IPv6 address; anything that is not one is 'private'. */
export function classifyAddress(ip: string, rules: AddressRules = {}): AddressClass {
  return classify(ip, rules).kind;
}

function bare(ip: string): string {
  return ip
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');
}

/** Whether `text` is a literal IPv4 or IPv6 address (brackets and a `%zone` are accepted). */
export function isIpAddress(text: string): boolean {
  const address = bare(text);
  return isIPv4(address) || (isIPv6(address) && parseV6(address) !== null);
}
