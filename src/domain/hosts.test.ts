import { describe, expect, it } from 'vitest';
import { hostAllowed, normalizeEmbedHost } from './hosts.ts';

describe('normalizeEmbedHost', () => {
  it.each([
    ['example.com', 'example.com'],
    ['Example.COM', 'example.com'],
    ['https://www.example.com/pricing?x=1', 'www.example.com'],
    ['http://shop.example.com:8443', 'shop.example.com'],
    ['example.com.', 'example.com'],
    ['*.Example.com', '*.example.com'],
    ['localhost', 'localhost'],
    ['127.0.0.1:3000', '127.0.0.1'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['  example.org  ', 'example.org'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeEmbedHost(input)).toBe(expected);
  });

  it.each(['', ' ', 'exa mple.com', '-bad.com', 'bad-.com', '*.com', 'a.*.com', '*', 'user@example.com', '[::1]', 'a..b', `${'a'.repeat(64)}.com`, '*.1.2.3.4'])(
    'refuses %j', (input) => {
      expect(normalizeEmbedHost(input)).toBeNull();
    });
});

describe('hostAllowed', () => {
  it('matches exact hosts and wildcard subdomains only', () => {
    const list = ['example.com', '*.shop.io'];
    expect(hostAllowed('example.com', list)).toBe(true);
    expect(hostAllowed('EXAMPLE.com', list)).toBe(true);
    expect(hostAllowed('www.example.com', list)).toBe(false);
    expect(hostAllowed('a.shop.io', list)).toBe(true);
    expect(hostAllowed('a.b.shop.io', list)).toBe(true);
    expect(hostAllowed('shop.io', list)).toBe(false);
    expect(hostAllowed('evilshop.io', list)).toBe(false);
  });
});
