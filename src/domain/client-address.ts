import ipaddr from 'ipaddr.js';

/**
 * Who a request comes from when proxies stand between the client and us (issue 40, D16). The
 * direct peer is the client unless it is a trusted proxy (TRUSTED_PROXIES); then X-Forwarded-For
 * is read right to left, each hop the proxy before it appended, until the first address that is
 * not a trusted proxy: what a client writes into the header itself lies further left and is never
 * reached (as Express's `trust proxy` and proxy-addr decide).
 */

/** Whether an address (already normalized) is one of the trusted proxies. */
export type ProxyTrust = (address: string) => boolean;

/** Names for common ranges, as proxy-addr has them. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** Dotted-quad IPv4 or IPv6 only: not the classful or hexadecimal forms ipaddr.js would also read. */
const isAddress = (text: string): boolean => ipaddr.IPv4.isValidFourPartDecimal(text) || (text.includes(':') && ipaddr.IPv6.isValid(text));

/** An IP address in its canonical text (an IPv4-mapped IPv6 address as plain IPv4), or null when it is none. */
export function normalizeAddress(text: string): string | null {
  const trimmed = text.trim();
  return isAddress(trimmed) ? ipaddr.process(trimmed).toString() : null;
}

/** A range, an IPv4-mapped IPv6 one as the IPv4 range it covers (addresses are compared normalized). */
function parseRange(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const [text, bitsText] = entry.split('/') as [string, string | undefined];
  if (!isAddress(text) || (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText))) throw new Error('not an address');
  const address = ipaddr.parse(text);
  const max = address.kind() === 'ipv4' ? 32 : 128;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (bits > max) throw new Error('prefix too long');
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && bits >= 96) return [address.toIPv4Address(), bits - 96];
  return [address, bits];
}

/**
 * Reads TRUSTED_PROXIES: addresses, CIDR ranges and the names `loopback`, `linklocal` and
 * `uniquelocal`, comma separated; empty trusts nobody. Throws naming the first entry it cannot read.
 */
export function parseTrustedProxies(text: string): ProxyTrust {
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const raw of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    for (const entry of NAMED_RANGES[raw.toLowerCase()] ?? [raw]) {
      try {
        ranges.push(parseRange(entry));
      } catch {
        throw new Error(`TRUSTED_PROXIES: "${raw}" is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`);
      }
    }
  }
  if (ranges.length === 0) return () => false;
  return (address) => {
    if (!isAddress(address)) return false;
    const parsed = ipaddr.process(address);
    return ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  };
}

/**
 * The client's address: `peer` (the socket's), or, when `peer` is a trusted proxy, the address
 * X-Forwarded-For names right to left past every trusted hop. A hop that is not an IP address
 * stops the walk at the last trusted one.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: ProxyTrust): string {
  let client = normalizeAddress(peer) ?? peer;
  if (!forwardedFor || !trusted(client)) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0 && trusted(client); i -= 1) {
    const hop = normalizeAddress(hops[i]!);
    if (!hop) break;
    client = hop;
  }
  return client;
}
