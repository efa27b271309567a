import { domainToASCII } from 'node:url';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * Normalizes an embed host for an agent's `domains` allowlist: accepts `Example.com`,
 * `https://www.example.com/path`, `example.com:8443`, `*.example.com` or an IPv4 address, and
 * answers the lower-case ASCII host (`*.` kept, scheme, port, path and trailing dot dropped),
 * or null when it is not a host. The Origin check compares hosts, so the port never matters.
 */
export function normalizeEmbedHost(input: string): string | null {
  let value = input.trim();
  if (!value || /\s/.test(value)) return null;
  value = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  value = value.replace(/[/?#].*$/, '');
  if (value.includes('@') || value.startsWith('[')) return null;
  value = value.replace(/:\d{1,5}$/, '').replace(/\.$/, '');
  const wildcard = value.startsWith('*.');
  if (wildcard) value = value.slice(2);
  if (!value || value.includes('*')) return null;
  if (IPV4.test(value)) return wildcard ? null : value;
  const ascii = domainToASCII(value.toLowerCase());
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (!labels.every((l) => LABEL.test(l))) return null;
  // A bare top-level name is fine (`localhost`), but `*.com` would allow half the web.
  if (wildcard && labels.length < 2) return null;
  return wildcard ? `*.${ascii}` : ascii;
}

/** Whether `host` (from a request's Origin) is allowed by a normalized allowlist. */
export function hostAllowed(host: string, allowlist: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return allowlist.some((entry) => (entry.startsWith('*.') ? h.endsWith(entry.slice(1)) : h === entry));
}
