import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';

/** The outcome of normalizing a SIP host: the bare `hostname[:port]`, or why it is refused. */
export type SipHostResult = { ok: true; host: string } | { ok: false; reason: string };

const SCHEME = /^(sips?|https?):(\/\/)?/i;
const PORT_AFTER_NAME = /^[a-z]+:\d+([;?/#]|$)/i;
const OTHER_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const DOTTED_NUMBERS = /^[0-9.]+$/;

/**
 * Reduces what people paste as a SIP host (`sip:alice@PBX.Example.com:5061;transport=tls`,
 * `https://pbx.example.com/admin`, `[2001:DB8::1]:5060`) to a bare, lower-case
 * `hostname[:port]`: schemes (`sip:`, `sips:`, `http(s)://`), the user part, paths, `;params`
 * and `?headers` are dropped. The host must be an IPv4 address, a bracketed IPv6 address or a
 * DNS name (internationalized names become their `xn--` form); the port 1 to 65535. Pure.
 *
 * @example normalizeSipHost('sips:trunk@PBX.example.com:5061;transport=tls') // { ok: true, host: 'pbx.example.com:5061' }
 */
export function normalizeSipHost(input: string): SipHostResult {
  let rest = input.trim();
  if (rest === '') return refuse('sip_host is empty');
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(rest)) return refuse('sip_host must not contain spaces or control characters');

  // `sip:5060` is the host `sip` on port 5060, not a URI naming the (invalid) host `5060`.
  const scheme = PORT_AFTER_NAME.test(rest) ? null : SCHEME.exec(rest);
  if (scheme) rest = rest.slice(scheme[0].length);
  else if (OTHER_SCHEME.test(rest)) return refuse('sip_host may only carry a sip:, sips:, http:// or https:// scheme');

  let hostPort: string;
  if (scheme && /^https?$/i.test(scheme[1]!)) {
    // URL: the authority ends at the path, query or fragment; the user info ends at its last `@`.
    const authority = rest.split(/[/?#]/, 1)[0]!;
    hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  } else {
    // SIP URI (RFC 3261): the user part may hold `;`, `?` and `/`, while params and headers
    // never hold `@`: the host starts after the last `@` and ends at the first `;`, `?`, `/` or `#`.
    hostPort = rest.slice(rest.lastIndexOf('@') + 1).split(/[;?/#]/, 1)[0]!;
  }
  return parseHostPort(hostPort);
}

function parseHostPort(hostPort: string): SipHostResult {
  let host: string;
  let port: string | undefined;
  if (hostPort.startsWith('[')) {
    const end = hostPort.indexOf(']');
    if (end < 0) return refuse('sip_host has an unclosed [ in its IPv6 address');
    host = hostPort.slice(0, end + 1);
    const after = hostPort.slice(end + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return refuse('sip_host has text after its IPv6 address');
      port = after.slice(1);
    }
  } else {
    const parts = hostPort.split(':');
    if (parts.length > 2) return refuse('sip_host must write an IPv6 address in brackets, e.g. [2001:db8::1]:5060');
    host = parts[0]!;
    port = parts[1];
  }

  const normalizedHost = normalizeHost(host);
  if (!normalizedHost.ok) return normalizedHost;
  if (port === undefined) return normalizedHost;
  if (!/^\d{1,5}$/.test(port)) return refuse('sip_host port must be a number from 1 to 65535');
  const number = Number(port);
  if (number < 1 || number > 65535) return refuse('sip_host port must be a number from 1 to 65535');
  return { ok: true, host: `${normalizedHost.host}:${number}` };
}

function normalizeHost(host: string): SipHostResult {
  if (host === '') return refuse('sip_host names no host');
  if (host.startsWith('[')) {
    const inner = host.slice(1, -1);
    if (inner.includes('%') || !ipaddr.IPv6.isValid(inner)) return refuse('sip_host has an invalid IPv6 address');
    const address = ipaddr.IPv6.parse(inner);
    // RFC 5952 text, except that IPv4-mapped addresses keep their dotted IPv4 part.
    const text = address.isIPv4MappedAddress() ? `::ffff:${address.toIPv4Address().toString()}` : address.toRFC5952String();
    return { ok: true, host: `[${text}]` };
  }
  if (DOTTED_NUMBERS.test(host)) {
    // Only the four-part dotted form, without leading zeros (which some parsers read as octal).
    if (!ipaddr.IPv4.isValidFourPartDecimal(host) || host.split('.').some((p) => p.length > 1 && p.startsWith('0'))) {
      return refuse('sip_host has an invalid IPv4 address');
    }
    return { ok: true, host };
  }
  return normalizeDnsName(host);
}

function normalizeDnsName(host: string): SipHostResult {
  // One trailing dot (a fully qualified name) is the same host.
  let name = host.endsWith('.') ? host.slice(0, -1) : host;
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(name)) name = domainToASCII(name);
  name = name.toLowerCase();
  if (name === '' || name.length > 253) return refuse('sip_host is not a valid host name');
  const labels = name.split('.');
  if (labels.some((l) => !LABEL.test(l))) {
    return refuse('sip_host is not a valid host name: each dot-separated label is 1 to 63 letters, digits or inner hyphens');
  }
  // A name whose last label is all digits would be read as an (invalid) address.
  if (/^\d+$/.test(labels[labels.length - 1]!)) return refuse('sip_host is not a valid host name or IPv4 address');
  return { ok: true, host: name };
}

const refuse = (reason: string): SipHostResult => ({ ok: false, reason });
