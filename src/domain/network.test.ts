import { describe, expect, it } from 'vitest';
import ipaddr from 'ipaddr.js';
import {
  addressExcepted, checkOutboundUrlShape, classifyAddress, embeddedIpv4, hostExcepted, isPublicAddress, parseHostExceptions,
} from './network.ts';

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['::1', 'loopback'], ['[::1]', 'loopback'],
    ['10.0.0.1', 'private'], ['172.16.5.4', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link_local'], ['fe80::1', 'link_local'],
    ['100.64.0.1', 'carrier_grade_nat'], ['100.127.255.255', 'carrier_grade_nat'],
    ['fd12:3456::1', 'unique_local'], ['fc00::1', 'unique_local'],
    ['0.0.0.0', 'unspecified'], ['0.1.2.3', 'unspecified'], ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'], ['ff02::1', 'multicast'], ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'], ['2001:db8::1', 'reserved'], ['64:ff9b::a00:1', 'private'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:10.1.2.3', 'private'], ['::ffff:8.8.8.8', 'public'],
    ['8.8.8.8', 'public'], ['172.32.0.1', 'public'], ['100.128.0.1', 'public'], ['2606:4700:4700::1111', 'public'],
    ['example.com', 'invalid'], ['300.1.1.1', 'invalid'], ['', 'invalid'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
    expect(isPublicAddress(address)).toBe(expected === 'public');
  });
});

/**
 * Every IPv6 form that carries an IPv4 address, each with a loopback, a private, a link-local
 * (cloud metadata) and a public IPv4 inside: the IPv6 is judged by the IPv4 it carries.
 */
describe('IPv6 addresses that carry an IPv4 address are judged by it', () => {
  // [form, address, the IPv4 it carries (several for Teredo and local-use NAT64), class]
  const table: [string, string, string[], string][] = [
    ['IPv4-compatible ::/96, dotted', '::127.0.0.1', ['127.0.0.1'], 'loopback'],
    ['IPv4-compatible ::/96, hex (what URL parsing makes of it)', '::7f00:1', ['127.0.0.1'], 'loopback'],
    ['IPv4-compatible ::/96, bracketed', '[::7f00:1]', ['127.0.0.1'], 'loopback'],
    ['IPv4-compatible ::/96', '::10.0.0.1', ['10.0.0.1'], 'private'],
    ['IPv4-compatible ::/96', '::169.254.169.254', ['169.254.169.254'], 'link_local'],
    ['IPv4-compatible ::/96', '::0.0.0.2', ['0.0.0.2'], 'unspecified'],
    ['IPv4-compatible ::/96', '::8.8.8.8', ['8.8.8.8'], 'public'],
    ['IPv4-mapped ::ffff:0:0/96', '::ffff:7f00:1', ['127.0.0.1'], 'loopback'],
    ['IPv4-mapped ::ffff:0:0/96', '::ffff:a9fe:a9fe', ['169.254.169.254'], 'link_local'],
    ['IPv4-mapped ::ffff:0:0/96', '::ffff:8.8.4.4', ['8.8.4.4'], 'public'],
    ['IPv4-translated ::ffff:0:0:0/96 (RFC 6145)', '::ffff:0:127.0.0.1', ['127.0.0.1'], 'loopback'],
    ['IPv4-translated ::ffff:0:0:0/96 (RFC 6145)', '::ffff:0:192.168.1.1', ['192.168.1.1'], 'private'],
    ['IPv4-translated ::ffff:0:0:0/96 (RFC 6145)', '::ffff:0:8.8.8.8', ['8.8.8.8'], 'public'],
    ['NAT64 64:ff9b::/96', '64:ff9b::127.0.0.1', ['127.0.0.1'], 'loopback'],
    ['NAT64 64:ff9b::/96', '64:ff9b::a9fe:a9fe', ['169.254.169.254'], 'link_local'],
    ['NAT64 64:ff9b::/96', '64:ff9b::100.64.0.1', ['100.64.0.1'], 'carrier_grade_nat'],
    ['NAT64 64:ff9b::/96', '64:ff9b::8.8.8.8', ['8.8.8.8'], 'public'],
    // Local-use prefixes may be 48 to 96 bits long: the IPv4 read at every possible place, /96 first.
    ['local-use NAT64 64:ff9b:1::/48, /96 prefix', '64:ff9b:1::7f00:1', ['127.0.0.1', '0.0.0.127', '0.0.0.0', '0.0.0.0'], 'loopback'],
    ['local-use NAT64 64:ff9b:1::/48, /48 prefix', '64:ff9b:1:a08:8:808:808:808', ['8.8.8.8', '8.8.8.8', '8.8.8.8', '10.8.8.8'], 'private'],
    ['local-use NAT64 64:ff9b:1::/48, any prefix', '64:ff9b:1:808:8:808:808:808', ['8.8.8.8', '8.8.8.8', '8.8.8.8', '8.8.8.8'], 'public'],
    ['6to4 2002::/16', '2002:7f00:1::1', ['127.0.0.1'], 'loopback'],
    ['6to4 2002::/16', '2002:a00:1::', ['10.0.0.1'], 'private'],
    ['6to4 2002::/16', '2002:a9fe:a9fe::1', ['169.254.169.254'], 'link_local'],
    ['6to4 2002::/16', '2002:808:808::1', ['8.8.8.8'], 'public'],
    ['Teredo 2001::/32, client 127.0.0.1', '2001:0:4136:e378:8000:63bf:80ff:fffe', ['65.54.227.120', '127.0.0.1'], 'loopback'],
    ['Teredo 2001::/32, server 10.0.0.1', '2001:0:a00:1:8000:63bf:f7f7:f7f7', ['10.0.0.1', '8.8.8.8'], 'private'],
    ['Teredo 2001::/32, both public', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', ['65.54.227.120', '8.8.8.8'], 'public'],
    ['ISATAP interface id 0:5efe', '2001:4860::5efe:a00:1', ['10.0.0.1'], 'private'],
    ['ISATAP interface id 200:5efe', '2001:4860::200:5efe:7f00:1', ['127.0.0.1'], 'loopback'],
    ['ISATAP interface id', '2001:4860::5efe:808:808', ['8.8.8.8'], 'public'],
  ];
  it.each(table)('%s: %s carries %j and is %s', (_form, address, carried, expected) => {
    expect(embeddedIpv4(ipaddr.IPv6.parse(address.replace(/^\[|\]$/g, ''))).map(String)).toEqual(carried);
    expect(classifyAddress(address)).toBe(expected);
    expect(isPublicAddress(address)).toBe(expected === 'public');
  });

  it.each([
    ['::', 'unspecified'], ['::1', 'loopback'], ['fe80::5efe:808:808', 'link_local'], ['fd00::5efe:808:808', 'unique_local'],
    ['ff02::5efe:808:808', 'multicast'], ['2001:db8::808:808', 'reserved'], ['2606:4700:4700::1111', 'public'],
  ])('%s keeps its own class (%s): its range is no way to an IPv4 address', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('refuses https://[::127.0.0.1]/ and every other form in a URL, before any lookup', () => {
    for (const [, address, , expected] of table) {
      const url = `https://[${address.replace(/^\[|\]$/g, '')}]/`;
      expect(checkOutboundUrlShape(url, { allowPrivate: false })?.code ?? null, url).toBe(expected === 'public' ? null : 'private_network_target');
      expect(checkOutboundUrlShape(url, { allowPrivate: true }), url).toBeNull();
    }
    expect(new URL('https://[::127.0.0.1]/').hostname).toBe('[::7f00:1]');
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

describe('user info and OUTBOUND_ALLOWED_HOSTS (issue 40)', () => {
  it('refuses a URL carrying user info, whatever the policy, before its scheme', () => {
    for (const url of ['http://127.0.0.1:80@1.1.1.1/x', 'https://a@b.example.com/', 'https://user:pass@93.184.215.14/', 'https://@93.184.215.14/']) {
      for (const opts of [{ allowPrivate: false }, { allowPrivate: true }, { allowPrivate: false, allowHttp: true }]) {
        expect(checkOutboundUrlShape(url, opts), url).toMatchObject({ code: 'invalid_url', message: expect.stringMatching(/user info/) });
      }
    }
    expect(checkOutboundUrlShape('https://hooks.example.com/a@b', { allowPrivate: false })).toBeNull();
  });

  it('parses names, wildcards, addresses and ranges, and refuses anything else', () => {
    const ex = parseHostExceptions(' intranet.example , *.corp.example., 10.1.0.0/16, 127.0.0.1, [fd00::1], fe80::/10 ');
    expect(hostExcepted(ex, 'INTRANET.example.')).toBe(true);
    expect(hostExcepted(ex, 'wiki.corp.example')).toBe(true);
    expect(hostExcepted(ex, 'corp.example')).toBe(false);
    expect(hostExcepted(ex, 'evilintranet.example')).toBe(false);
    expect(hostExcepted(ex, '127.0.0.1')).toBe(false); // an address is judged as an address
    for (const a of ['10.1.200.3', '127.0.0.1', 'fd00::1', '[fe80::1]', '::ffff:10.1.0.9']) expect(addressExcepted(ex, a), a).toBe(true);
    for (const a of ['10.2.0.1', '127.0.0.2', 'fd00::2', '169.254.169.254']) expect(addressExcepted(ex, a), a).toBe(false);
    expect(parseHostExceptions(undefined)).toEqual({ names: [], ranges: [] });
    for (const bad of ['10.0.0.0/33', 'http://x.example', 'a b', '*.']) expect(() => parseHostExceptions(bad), bad).toThrow();
  });

  it('lets an excepted private IP literal through the shape check, and nothing else', () => {
    const exceptions = parseHostExceptions('127.0.0.1');
    expect(checkOutboundUrlShape('https://127.0.0.1:8443/', { allowPrivate: false, exceptions })).toBeNull();
    expect(checkOutboundUrlShape('https://127.0.0.2/', { allowPrivate: false, exceptions })?.code).toBe('private_network_target');
  });
});
