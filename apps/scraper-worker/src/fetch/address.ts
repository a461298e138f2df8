import { isIPv4, isIPv6 } from 'node:net';

export type AddressClass = 'public' | 'private' | 'metadata';

/** Decides whether the worker may open a connection to an IP address. */
export type AddressPolicy = (ip: string) => boolean;

type Rule = readonly [prefix: string, bits: number, cls: AddressClass];

// First match wins, so the narrow metadata entries come before the ranges that contain them.
// All of 169.254/16 counts as metadata: cloud providers put several services there
// (169.254.169.254, ECS 169.254.170.2, Tencent 169.254.0.23, EKS 169.254.170.23).
const V4_RULES: readonly Rule[] = [
  ['169.254.0.0', 16, 'metadata'],
  ['100.100.100.200', 32, 'metadata'], // Alibaba Cloud
  ['168.63.129.16', 32, 'metadata'], // Azure WireServer
  ['192.0.0.192', 32, 'metadata'], // Oracle Cloud (legacy)
  ['0.0.0.0', 8, 'private'], // "this network"; 0.0.0.0 reaches localhost on Linux
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'], // CGNAT
  ['127.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'private'], // IETF protocol assignments
  ['192.0.2.0', 24, 'private'], // TEST-NET-1
  ['192.88.99.0', 24, 'private'], // 6to4 relay anycast
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'private'], // benchmarking
  ['198.51.100.0', 24, 'private'], // TEST-NET-2
  ['203.0.113.0', 24, 'private'], // TEST-NET-3
  ['224.0.0.0', 4, 'private'], // multicast
  ['240.0.0.0', 4, 'private'], // reserved, including 255.255.255.255
];

/**
 * Classifies an IPv4 or IPv6 address string (IPv4-mapped, NAT64 and 6to4 forms are judged by
 * the IPv4 address they carry). 'private' covers loopback, private, link-local, CGNAT,
 * multicast and reserved ranges; 'metadata' covers cloud metadata services. Throws a
 * TypeError for a string that is not an IP address.
 */
export function classifyAddress(ip: string): AddressClass {
  const address = stripDecorations(ip);
  if (isIPv4(address)) return classifyV4(parseV4(address));
  if (isIPv6(address)) return classifyV6(parseV6(address));
  throw new TypeError(`not an IP address: ${ip}`);
}

/** The production policy: public addresses always, private ones only when allowed, metadata never. */
export function addressPolicy(allowPrivate: boolean): AddressPolicy {
  return (ip) => {
    try {
      const cls = classifyAddress(ip);
      return cls === 'public' || (cls === 'private' && allowPrivate);
    } catch {
      return false;
    }
  };
}

function stripDecorations(ip: string): string {
  let address = ip.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  return zone === -1 ? address : address.slice(0, zone);
}

function parseV4(address: string): number {
  return address.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function classifyV4(value: number): AddressClass {
  for (const [prefix, bits, cls] of V4_RULES) {
    const size = 2 ** (32 - bits);
    const base = parseV4(prefix);
    if (value >= base && value < base + size) return cls;
  }
  return 'public';
}

/** Eight 16-bit groups. */
function parseV6(address: string): number[] {
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseV4(last);
    text = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const headGroups = groups(head);
  if (rest === undefined) return headGroups;
  const restGroups = groups(rest);
  const zeros = Array<number>(8 - headGroups.length - restGroups.length).fill(0);
  return [...headGroups, ...zeros, ...restGroups];
}

function v6Prefix(groups: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((groups[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function embeddedV4(high: number | undefined, low: number | undefined): number {
  return (high ?? 0) * 65536 + (low ?? 0);
}

function atLeastPrivate(cls: AddressClass): AddressClass {
  return cls === 'public' ? 'private' : cls;
}

function classifyV6(g: number[]): AddressClass {
  const isZeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (isZeroUpTo(8)) return 'private'; // ::
  if (isZeroUpTo(7) && g[7] === 1) return 'private'; // ::1
  if (isZeroUpTo(5) && g[5] === 0xffff) return classifyV4(embeddedV4(g[6], g[7])); // IPv4-mapped
  if (isZeroUpTo(6)) return atLeastPrivate(classifyV4(embeddedV4(g[6], g[7]))); // IPv4-compatible (deprecated)
  if (v6Prefix(g, [0x64, 0xff9b, 0, 0, 0, 0], 96)) return classifyV4(embeddedV4(g[6], g[7])); // NAT64
  if (v6Prefix(g, [0x2002], 16)) return classifyV4(embeddedV4(g[1], g[2])); // 6to4
  if (v6Prefix(g, [0xfd00, 0x0ec2], 32)) return 'metadata'; // AWS IMDS, DNS and NTP (fd00:ec2::254 …)
  if (v6Prefix(g, [0x2001, 0], 23)) return 'private'; // IETF protocol assignments, Teredo
  if (v6Prefix(g, [0x2001, 0x0db8], 32)) return 'private'; // documentation
  if (v6Prefix(g, [0xfc00], 7)) return 'private'; // unique local
  if (v6Prefix(g, [0xfe80], 10)) return 'private'; // link-local
  if (v6Prefix(g, [0xfec0], 10)) return 'private'; // site-local (deprecated)
  if (v6Prefix(g, [0xff00], 8)) return 'private'; // multicast
  if (!v6Prefix(g, [0x2000], 3)) return 'private'; // outside global unicast: reserved or special use
  return 'public';
}
