import { describe, expect, test } from '@jest/globals';
import { addressPolicy } from './address.ts';

// The address table itself is tested in @scrapejobs/outbound; this is the worker's use of it.
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
        '169.254.1.1',
        'fd00:ec2::254',
        '100.100.100.200',
        '::ffff:169.254.169.254',
        '64:ff9b::a9fe:101',
      ].map(allowed),
    ).toEqual([true, true, true, true, false, false, false, false, false, false]);
  });

  test('refuses strings that are not IP addresses', () => {
    expect(['localhost', 'example.com', '1.2.3', '256.1.1.1', ''].map(addressPolicy(true))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
