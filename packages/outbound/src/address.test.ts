import { type AddressRules, classifyAddress, OutboundGuard } from './index.ts';
import { classify, isIpAddress } from './internal/address.ts';

const isAllowedAddress = (ip: string, allowPrivate: boolean, rules: AddressRules = {}) =>
  new OutboundGuard({ allowPrivate, rules }).allows(ip, 80);

// Pure classification of address strings: nothing here opens a connection.
const cases: [string, 'public' | 'private' | 'metadata'][] = [
  // public
  ['8.8.8.8', 'public'],
  ['93.184.215.14', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.0', 'public'],
  ['172.15.255.255', 'public'],
  ['172.32.0.0', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['2a00:1450:4001:82a::200e', 'public'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:808:808', 'public'],
  ['64:ff9b::808:808', 'public'],
  ['64:ff9b::8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['192.167.255.255', 'public'],
  ['169.253.255.255', 'public'], // just below link-local
  ['169.255.0.0', 'public'], // just above link-local
  ['223.255.255.255', 'public'],
  ['2001:4860:4860::8888', 'public'],
  // loopback, private, link-local, CGNAT, multicast, unspecified, reserved
  ['127.0.0.1', 'private'],
  ['127.255.255.254', 'private'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.1.1', 'private'], // link-local outside the known endpoints, by default
  ['100.64.0.1', 'private'],
  ['100.127.255.255', 'private'],
  ['224.0.0.1', 'private'],
  ['239.255.255.250', 'private'],
  ['0.0.0.0', 'private'],
  ['0.1.2.3', 'private'],
  ['255.255.255.255', 'private'],
  ['240.0.0.1', 'private'],
  ['192.0.2.10', 'private'],
  ['198.18.0.1', 'private'],
  ['198.51.100.7', 'private'],
  ['203.0.113.9', 'private'],
  ['::1', 'private'],
  ['::', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['fe80::1', 'private'],
  ['fe80::1%eth0', 'private'],
  ['fec0::1', 'private'],
  ['ff02::1', 'private'],
  ['100::1', 'private'],
  ['2001:db8::1', 'private'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'private'], // Teredo
  ['2002:c000:0201::1', 'private'], // 6to4 of a documentation address
  ['2002:0808:0808::1', 'private'], // 6to4 is deprecated: never public
  ['::127.0.0.1', 'private'], // IPv4-compatible
  ['::8.8.8.8', 'private'], // IPv4-compatible public: deprecated, still refused
  ['64:ff9b:1::808:808', 'private'], // local-use NAT64: the IPv4 address may sit elsewhere
  ['64:ff9b::10.0.0.1', 'private'], // NAT64 to a private address
  ['2002:a00:1::1', 'private'], // 6to4 of 10.0.0.1
  ['0:0:0:0:0:0:0:1', 'private'],
  ['febf:ffff::1', 'private'],
  ['2001::1', 'private'], // Teredo
  ['4000::1', 'private'], // outside global unicast
  ['3fff::1', 'private'], // documentation
  // IPv4-mapped and translated forms judge the embedded address
  ['::ffff:127.0.0.1', 'private'],
  ['::ffff:7f00:1', 'private'],
  ['::ffff:a00:1', 'private'],
  ['::FFFF:10.1.2.3', 'private'],
  ['0:0:0:0:0:ffff:192.168.0.1', 'private'],
  ['64:ff9b::7f00:1', 'private'],
  ['[::1]', 'private'],
  // cloud metadata
  ['169.254.169.254', 'metadata'],
  ['169.254.169.253', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['169.254.0.23', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['192.0.0.192', 'metadata'],
  ['168.63.129.16', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['fd00:ec2::23', 'metadata'],
  ['fd00:ec2:0:0:0:0:0:254', 'metadata'],
  ['64:ff9b::169.254.169.254', 'metadata'],
  ['64:ff9b:1::a9fe:a9fe', 'metadata'],
  ['[fd00:ec2::254]', 'metadata'],
  ['::ffff:169.254.169.254', 'metadata'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['64:ff9b::a9fe:a9fe', 'metadata'],
  ['2002:a9fe:a9fe::1', 'metadata'],
  ['::169.254.169.254', 'metadata'],
  // not addresses: fail closed
  ['localhost', 'private'],
  ['example.com', 'private'],
  ['1.2.3', 'private'],
  ['256.1.1.1', 'private'],
  ['1::2::3', 'private'],
  ['0x7f.0.0.1', 'private'],
  ['::g', 'private'],
  ['', 'private'],
];

describe('classifyAddress', () => {
  it.each(cases)('classifies %s as %s', (ip, expected) => {
    expect(classifyAddress(ip)).toBe(expected);
  });
});

describe('classifyAddress with linkLocalIsMetadata', () => {
  const strict = { linkLocalIsMetadata: true };
  it.each([
    '169.254.0.0',
    '169.254.1.1',
    '169.254.255.255',
    '::ffff:169.254.1.1',
    '::ffff:a9fe:101',
    '64:ff9b::169.254.1.1',
    '64:ff9b:1::a9fe:101',
    '2002:a9fe:101::1',
    '::169.254.1.1',
  ])('classifies %s as metadata', (ip) => {
    expect(classifyAddress(ip, strict)).toBe('metadata');
  });

  it('changes nothing else', () => {
    const others = cases.filter(([ip]) => classifyAddress(ip) !== 'private' || !ip.includes('169.254'));
    for (const [ip, expected] of others) expect(classifyAddress(ip, strict)).toBe(expected);
    expect(classifyAddress('169.253.255.255', strict)).toBe('public');
    expect(classifyAddress('169.255.0.0', strict)).toBe('public');
    expect(isAllowedAddress('169.254.1.1', true)).toBe(true);
    expect(isAllowedAddress('169.254.1.1', true, strict)).toBe(false);
  });
});

describe('OutboundGuard.allows', () => {
  it('allows public addresses always', () => {
    expect(isAllowedAddress('8.8.8.8', false)).toBe(true);
    expect(isAllowedAddress('2606:4700:4700::1111', false)).toBe(true);
  });

  it('allows private and loopback addresses only when private targets are allowed', () => {
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', '::ffff:192.168.0.1']) {
      expect(isAllowedAddress(ip, false)).toBe(false);
      expect(isAllowedAddress(ip, true)).toBe(true);
    }
  });

  it('never allows strings that are not IP addresses', () => {
    for (const text of ['localhost', 'example.com', '1.2.3', '0x7f.0.0.1', '1::2::3', '']) {
      expect(isIpAddress(text)).toBe(false);
      expect(isAllowedAddress(text, true)).toBe(false);
    }
    expect(isIpAddress('[fe80::1%eth0]')).toBe(true);
  });

  it('never allows metadata addresses, even when private targets are allowed', () => {
    for (const ip of ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '::ffff:169.254.169.254']) {
      expect(isAllowedAddress(ip, true)).toBe(false);
    }
  });
});

describe('classify', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['100.64.0.1', 'CGNAT'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['192.0.2.10', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['::8.8.8.8', 'IPv4-compatible'],
    ['2002:a00:1::1', '6to4'],
    ['4000::1', 'reserved'],
    ['169.254.169.254', 'metadata'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['8.8.8.8', 'public'],
    ['example.com', 'not an address'],
  ])('names the range of %s: %s', (ip, range) => {
    expect(classify(ip).range).toBe(range);
  });

  it('names the range of link-local counted as metadata', () => {
    expect(classify('169.254.1.1', { linkLocalIsMetadata: true })).toEqual({
      kind: 'metadata',
      range: 'link-local',
    });
  });
});
