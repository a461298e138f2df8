import { describe, expect, test } from '@jest/globals';
import { addressPolicy, classifyAddress } from './address.ts';

describe('classifyAddress', () => {
  test.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['93.184.216.34'],
    ['100.63.255.255'], // just below CGNAT
    ['100.128.0.0'], // just above CGNAT
    ['172.15.255.255'],
    ['172.32.0.0'],
    ['192.167.255.255'],
    ['169.253.255.255'],
    ['223.255.255.255'],
    ['2606:4700:4700::1111'],
    ['2001:4860:4860::8888'],
    ['::ffff:8.8.8.8'],
    ['::ffff:808:808'],
    ['64:ff9b::8.8.8.8'],
    ['2002:808:808::1'],
  ])('%s is public', (ip) => {
    expect(classifyAddress(ip)).toBe('public');
  });

  test.each([
    ['127.0.0.1'],
    ['127.255.255.254'],
    ['10.0.0.1'],
    ['10.255.255.255'],
    ['172.16.0.1'],
    ['172.31.255.255'],
    ['192.168.1.1'],
    ['100.64.0.1'], // CGNAT
    ['100.127.255.255'],
    ['0.0.0.0'],
    ['0.1.2.3'],
    ['255.255.255.255'],
    ['224.0.0.1'], // multicast
    ['239.255.255.250'],
    ['240.0.0.1'], // reserved
    ['192.0.2.10'], // documentation
    ['198.18.0.1'], // benchmarking
    ['::'],
    ['::1'],
    ['[::1]'],
    ['0:0:0:0:0:0:0:1'],
    ['::ffff:127.0.0.1'],
    ['::ffff:10.0.0.1'],
    ['::FFFF:192.168.0.1'],
    ['::ffff:a00:1'], // IPv4-mapped 10.0.0.1 in hex form
    ['::127.0.0.1'], // IPv4-compatible
    ['::8.8.8.8'], // IPv4-compatible public: deprecated, still refused
    ['64:ff9b::10.0.0.1'], // NAT64 to a private address
    ['2002:a00:1::1'], // 6to4 of 10.0.0.1
    ['fc00::1'],
    ['fd12:3456:789a::1'],
    ['fe80::1'],
    ['fe80::1%eth0'],
    ['febf:ffff::1'],
    ['fec0::1'],
    ['ff02::1'],
    ['2001:db8::1'],
    ['2001::1'], // Teredo
    ['100::1'], // discard prefix
    ['4000::1'], // outside global unicast
  ])('%s is private', (ip) => {
    expect(classifyAddress(ip)).toBe('private');
  });

  test.each([
    ['169.254.169.254'], // AWS, GCP, Azure, DigitalOcean, OpenStack
    ['169.254.170.2'], // AWS ECS task metadata
    ['169.254.0.23'], // Tencent
    ['169.254.1.1'], // the rest of IPv4 link-local
    ['100.100.100.200'], // Alibaba
    ['168.63.129.16'], // Azure WireServer
    ['192.0.0.192'], // Oracle
    ['fd00:ec2::254'], // AWS IMDS over IPv6
    ['fd00:ec2:0:0:0:0:0:254'],
    ['fd00:ec2::23'],
    ['::ffff:169.254.169.254'],
    ['::ffff:a9fe:a9fe'],
    ['64:ff9b::169.254.169.254'],
    ['64:ff9b::a9fe:a9fe'],
    ['2002:a9fe:a9fe::1'],
    ['::169.254.169.254'],
  ])('%s is metadata', (ip) => {
    expect(classifyAddress(ip)).toBe('metadata');
  });

  test.each([['localhost'], ['example.com'], ['1.2.3'], ['256.1.1.1'], ['0x7f.0.0.1'], ['::g'], ['']])(
    'rejects %j as not an IP address',
    (text) => {
      expect(() => classifyAddress(text)).toThrow(TypeError);
    },
  );
});

describe('addressPolicy', () => {
  test('allows only public addresses when private targets are not allowed', () => {
    const allowed = addressPolicy(false);
    expect(['8.8.8.8', '127.0.0.1', '10.0.0.1', '::1', '169.254.169.254'].map(allowed)).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });

  test('lifts loopback and private ranges but never metadata when private targets are allowed', () => {
    const allowed = addressPolicy(true);
    expect(
      [
        '8.8.8.8',
        '127.0.0.1',
        '192.168.0.1',
        'fd00::1',
        '169.254.169.254',
        'fd00:ec2::254',
        '100.100.100.200',
      ].map(allowed),
    ).toEqual([true, true, true, true, false, false, false]);
  });

  test('refuses strings that are not IP addresses', () => {
    expect(addressPolicy(true)('localhost')).toBe(false);
  });
});
