import { describe, expect, it } from 'vitest';
import { checkOutboundUrlShape, classifyAddress, isPublicAddress } from './network.ts';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['::1', 'loopback'], ['[::1]', 'loopback'],
    ['10.0.0.1', 'private'], ['172.16.5.4', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link_local'], ['fe80::1', 'link_local'],
    ['100.64.0.1', 'carrier_grade_nat'], ['100.127.255.255', 'carrier_grade_nat'],
    ['fd12:3456::1', 'unique_local'], ['fc00::1', 'unique_local'],
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'], ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'], ['ff02::1', 'multicast'], ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'], ['2001:db8::1', 'reserved'], ['64:ff9b::a00:1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:10.1.2.3', 'private'], ['::ffff:8.8.8.8', 'public'],
    ['8.8.8.8', 'public'], ['172.32.0.1', 'public'], ['100.128.0.1', 'public'], ['2606:4700:4700::1111', 'public'],
    ['example.com', 'invalid'], ['300.1.1.1', 'invalid'], ['', 'invalid'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
    expect(isPublicAddress(address)).toBe(expected === 'public');
  });
});

describe('checkOutboundUrlShape', () => {
  const strict = { allowPrivate: false };
  const lax = { allowPrivate: true };
  it('wants https unless private targets are allowed', () => {
    expect(checkOutboundUrlShape('https://hooks.example.com/x', strict)).toBeNull();
    expect(checkOutboundUrlShape('http://hooks.example.com/x', strict)?.code).toBe('https_required');
    expect(checkOutboundUrlShape('http://hooks.example.com/x', lax)).toBeNull();
    expect(checkOutboundUrlShape('ftp://hooks.example.com/x', lax)?.code).toBe('https_required');
    expect(checkOutboundUrlShape('nonsense', lax)?.code).toBe('invalid_url');
  });
  it('refuses private IP literals without a lookup, unless allowed', () => {
    for (const url of ['https://127.0.0.1/', 'https://[::1]:8443/', 'https://10.0.0.8/', 'https://[::ffff:192.168.0.1]/', 'https://0x7f000001/']) {
      expect(checkOutboundUrlShape(url, strict)?.code, url).toBe('private_network_target');
      expect(checkOutboundUrlShape(url, lax), url).toBeNull();
    }
    expect(checkOutboundUrlShape('https://93.184.215.14/', strict)).toBeNull();
  });
});
