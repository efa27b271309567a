import { describe, expect, it } from 'vitest';
import { clientAddress, normalizeAddress, parseTrustedProxies } from './client-address.ts';

describe('clientAddress behind trusted proxies (issue 40, D16)', () => {
  const balancer = parseTrustedProxies('10.0.0.0/8, 127.0.0.1');

  it('is the peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(clientAddress('198.51.100.7', '203.0.113.1', parseTrustedProxies(''))).toBe('198.51.100.7');
    expect(clientAddress('::ffff:198.51.100.7', undefined, parseTrustedProxies(''))).toBe('198.51.100.7');
  });

  it('is the peer when the peer is not a trusted proxy', () => {
    expect(clientAddress('198.51.100.7', '203.0.113.1', balancer)).toBe('198.51.100.7');
  });

  it('walks right to left past trusted hops, never reaching what the client wrote itself', () => {
    // The client sent "X-Forwarded-For: 1.1.1.1"; the edge proxy appended the client, the inner one the edge.
    expect(clientAddress('127.0.0.1', '1.1.1.1, 203.0.113.9, 10.1.2.3', balancer)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:127.0.0.1', '203.0.113.9', balancer)).toBe('203.0.113.9');
    expect(clientAddress('10.0.0.1', '2001:db8::5', balancer)).toBe('2001:db8::5');
  });

  it('stops at a hop that is not an address, and when every hop is trusted takes the leftmost', () => {
    expect(clientAddress('127.0.0.1', 'unknown, 10.9.9.9', balancer)).toBe('10.9.9.9');
    expect(clientAddress('127.0.0.1', '1.2.3, 203.0.113.9', balancer)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', '10.0.0.2, 10.0.0.3', balancer)).toBe('10.0.0.2');
  });

  it('reads addresses, CIDR ranges and named ranges, and refuses anything else naming it', () => {
    const trust = parseTrustedProxies('loopback,uniquelocal, 2001:db8::/32, ::ffff:192.0.2.0/120');
    for (const yes of ['127.0.0.9', '::1', '192.168.4.4', '172.20.0.1', 'fd00::1', '2001:db8:1::1', '192.0.2.77']) expect(trust(yes), yes).toBe(true);
    for (const no of ['8.8.8.8', '2001:db9::1', '172.32.0.1', 'localhost', '']) expect(trust(no), no).toBe(false);
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '1.2.3', '10.0.0.0/x']) expect(() => parseTrustedProxies(bad), bad).toThrow(/TRUSTED_PROXIES/);
    expect(normalizeAddress('::FFFF:10.0.0.1')).toBe('10.0.0.1');
  });
});
