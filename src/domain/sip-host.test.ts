import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeSipHost } from './sip-host.ts';

describe('normalizeSipHost', () => {
  it.each([
    ['pbx.example.com', 'pbx.example.com'],
    ['PBX.Example.COM', 'pbx.example.com'],
    ['  pbx.example.com  ', 'pbx.example.com'],
    ['pbx.example.com:5060', 'pbx.example.com:5060'],
    ['pbx.example.com.', 'pbx.example.com'],
    ['pbx', 'pbx'],
    ['sip:pbx.example.com', 'pbx.example.com'],
    ['SIP:pbx.example.com', 'pbx.example.com'],
    ['sips:pbx.example.com:5061', 'pbx.example.com:5061'],
    ['sip://pbx.example.com', 'pbx.example.com'],
    ['sip:alice@pbx.example.com', 'pbx.example.com'],
    ['sip:alice:secret@pbx.example.com:5060', 'pbx.example.com:5060'],
    ['sip:+14155550123;phone-context=example.com@gw.example.com;user=phone', 'gw.example.com'],
    ['sips:trunk@PBX.example.com:5061;transport=tls?subject=hi', 'pbx.example.com:5061'],
    ['alice@pbx.example.com', 'pbx.example.com'],
    ['pbx.example.com;transport=udp', 'pbx.example.com'],
    ['pbx.example.com/some/path', 'pbx.example.com'],
    ['https://pbx.example.com/admin?x=1#top', 'pbx.example.com'],
    ['http://admin:pw@pbx.example.com:8080/login', 'pbx.example.com:8080'],
    ['HTTPS://PBX.example.com', 'pbx.example.com'],
    ['https://pbx.example.com/a@b', 'pbx.example.com'],
    ['203.0.113.10', '203.0.113.10'],
    ['sip:203.0.113.10:5060', '203.0.113.10:5060'],
    ['[2001:DB8::1]', '[2001:db8::1]'],
    ['[2001:0db8:0000:0000:0000:0000:0000:0001]:5060', '[2001:db8::1]:5060'],
    ['sips:alice@[2001:db8::1]:5061;transport=tls', '[2001:db8::1]:5061'],
    ['[::ffff:192.0.2.1]', '[::ffff:192.0.2.1]'],
    ['pbx.example.com:05060', 'pbx.example.com:5060'],
    ['pbx.example.com:1', 'pbx.example.com:1'],
    ['pbx.example.com:65535', 'pbx.example.com:65535'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['Bücher.example', 'xn--bcher-kva.example'],
    ['a-b.c-d.example', 'a-b.c-d.example'],
    ['1and1.example', '1and1.example'],
    ['sip:5060', 'sip:5060'],
    ['SIPS:5061;transport=tls', 'sips:5061'],
    ['sip:sip:5060', 'sip:5060'],
    ['https://https:8443/', 'https:8443'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeSipHost(input)).toEqual({ ok: true, host: expected });
  });

  it.each([
    [''], ['   '], ['sip:'], ['sip:alice@'], ['https://'], ['pbx example.com'], ['pbx.example.com\tx'],
    ['pbx.example.com:'], ['pbx.example.com:0'], ['pbx.example.com:65536'], ['pbx.example.com:123456'], ['pbx.example.com:50a'],
    ['pbx.example.com:-1'], [':5060'], ['-pbx.example.com'], ['pbx-.example.com'], ['pbx..example.com'], ['.example.com'],
    ['pbx_1.example.com'], ['pbx.example.com..'], [`${'a'.repeat(64)}.example.com`], [`${'abcdefghi.'.repeat(26)}com`],
    ['256.1.1.1'], ['1.2.3'], ['1.2.3.4.5'], ['01.2.3.4'], ['example.123'],
    ['2001:db8::1'], ['[2001:db8::1'], ['[2001:db8::zz]'], ['[fe80::1%eth0]'], ['[2001:db8::1]5060'], ['[2001:db8::1]:0'],
    ['ftp://pbx.example.com'], ['ws://pbx.example.com'], ['pbx.example.com\u0000'], ['pbx.ex*ample.com'], ['pbx.example.com:5060:1'],
  ])('refuses %j', (input) => {
    const result = normalizeSipHost(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/^sip_host /);
  });

  it('is idempotent on its own output', () => {
    for (const input of ['sips:trunk@PBX.example.com:5061;transport=tls', '[2001:DB8::1]:5060', 'Bücher.example']) {
      const once = normalizeSipHost(input);
      expect(once.ok).toBe(true);
      if (once.ok) expect(normalizeSipHost(once.host)).toEqual(once);
    }
  });

  it('never throws; what it accepts is a bare lower-case hostname[:port] that normalizes to itself', () => {
    const pieces = fc.constantFrom('sip:', 'sips:', 'https://', 'user@', 'a', 'B', '0', '9', '.', '-', ':', '[', ']', '::', '5060', ';x=y', '?h=v', '/p', '@', ' ', 'é', '%');
    const input = fc.oneof(fc.string({ maxLength: 40 }), fc.array(pieces, { maxLength: 12 }).map((p) => p.join('')));
    fc.assert(fc.property(input, (text) => {
      const result = normalizeSipHost(text);
      if (!result.ok) return;
      expect(result.host).toMatch(/^([a-z0-9.-]+|\[[0-9a-f:.]+\])(:[1-9][0-9]{0,4})?$/);
      expect(normalizeSipHost(result.host)).toEqual(result);
    }), { numRuns: 2000 });
  });
});
