import { isIPv4, isIPv6 } from 'node:net';

/** How an address may be used as an outbound target. */
export type AddressClass = 'public' | 'private' | 'metadata';

type V4Range = readonly [base: number, bits: number];

const v4 = (dotted: string): number => {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
};
const cidr4 = (text: string): V4Range => {
  const [base = '', bits = '32'] = text.split('/');
  return [v4(base), Number(bits)];
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
].map(cidr4);

// Everything that is not globally routable unicast (IANA special-purpose registry).
const NON_PUBLIC_V4 = [
  '0.0.0.0/8', // "this network", unspecified
  '10.0.0.0/8',
  '100.64.0.0/10', // CGNAT
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local
  '172.16.0.0/12',
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // documentation
  '192.88.99.0/24', // deprecated 6to4 relay anycast
  '192.168.0.0/16',
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // documentation
  '203.0.113.0/24', // documentation
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, broadcast
].map(cidr4);

const LINK_LOCAL_V4 = cidr4('169.254.0.0/16');

/** Stricter rules a caller may ask for. */
export interface AddressRules {
  /**
   * All of IPv4 link-local (169.254/16, also inside IPv6 forms) counts as metadata, not only the
   * known endpoints: providers keep adding services there. The scraper, which fetches URLs
   * that users name, asks for this.
   */
  readonly linkLocalIsMetadata?: boolean;
}

function classifyV4(n: number, rules: AddressRules): AddressClass {
  if (METADATA_V4.some((r) => inV4(n, r))) return 'metadata';
  if (rules.linkLocalIsMetadata && inV4(n, LINK_LOCAL_V4)) return 'metadata';
  if (NON_PUBLIC_V4.some((r) => inV4(n, r))) return 'private';
  return 'public';
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

const prefix6 = (text: string): [number[], number] => {
  const [base = '', bits = '128'] = text.split('/');
  return [parseV6(base)!, Number(bits)];
};
const METADATA_V6 = ['fd00:ec2::/32'].map(prefix6); // AWS IMDS (fd00:ec2::254), DNS, NTP
const MAPPED = prefix6('::ffff:0:0/96');
const NAT64 = prefix6('64:ff9b::/96');
// Local-use NAT64 (RFC 8215) may carry the IPv4 address at another offset: never public.
const LOCAL_NAT64 = prefix6('64:ff9b:1::/48');
const SIX_TO_FOUR = prefix6('2002::/16');
const COMPAT = prefix6('::/96');
const GLOBAL_UNICAST = prefix6('2000::/3');
const NON_PUBLIC_IN_GLOBAL = [
  '2001::/23', // IETF protocol assignments: Teredo, benchmarking, ORCHID…
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
].map(prefix6);

const embeddedV4 = (bytes: readonly number[], at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;

function classifyV6(bytes: number[], rules: AddressRules): AddressClass {
  const inAny = (ranges: readonly [number[], number][]) => ranges.some(([p, b]) => startsWith(bytes, p, b));
  if (inAny(METADATA_V6)) return 'metadata';
  // Translated addresses reach the embedded IPv4 address: judge that one.
  if (inAny([MAPPED, NAT64])) return classifyV4(embeddedV4(bytes, 12), rules);
  // Deprecated tunnelling and local translation forms: never public, but still metadata if
  // they point there.
  if (inAny([COMPAT, LOCAL_NAT64]))
    return classifyV4(embeddedV4(bytes, 12), rules) === 'metadata' ? 'metadata' : 'private';
  if (inAny([SIX_TO_FOUR]))
    return classifyV4(embeddedV4(bytes, 2), rules) === 'metadata' ? 'metadata' : 'private';
  // Outside 2000::/3 lie ::, ::1, fc00::/7, fe80::/10, fec0::/10, ff00::/8, 100::/64…
  if (!inAny([GLOBAL_UNICAST]) || inAny(NON_PUBLIC_IN_GLOBAL)) return 'private';
  return 'public';
}

/**
 * Classifies a literal IPv4 or IPv6 address (brackets and a `%zone` are accepted).
 * Anything that does not parse as an address is 'private', so callers fail closed.
 */
export function classifyAddress(ip: string, rules: AddressRules = {}): AddressClass {
  const text = bare(ip);
  if (isIPv4(text)) return classifyV4(v4(text), rules);
  if (!isIPv6(text)) return 'private';
  const bytes = parseV6(text);
  return bytes ? classifyV6(bytes, rules) : 'private';
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

/** Whether a connection to `ip` is allowed; metadata addresses and non-addresses never are. */
export function isAllowedAddress(ip: string, allowPrivate: boolean, rules: AddressRules = {}): boolean {
  if (!isIpAddress(ip)) return false;
  const kind = classifyAddress(ip, rules);
  return kind === 'public' || (kind === 'private' && allowPrivate);
}
