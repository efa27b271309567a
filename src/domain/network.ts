import ipaddr from 'ipaddr.js';

/**
 * Where an address points, as far as outbound requests care. Only `public` may be reached
 * unless ALLOW_PRIVATE_NETWORK_TARGETS is set; every other class is a way into this machine
 * or its network (SSRF), or is no destination at all.
 */
export type AddressClass =
  | 'public' | 'loopback' | 'private' | 'link_local' | 'carrier_grade_nat' | 'unique_local'
  | 'unspecified' | 'multicast' | 'broadcast' | 'reserved' | 'invalid';

// ipaddr.js range names mapped onto ours. A range not listed (documentation, benchmarking,
// discard, ...) is `reserved`: it reaches nothing we should reach, so refusing it is the safe
// answer. Ranges that carry an IPv4 address are judged by that address (see `embeddedIpv4`).
const RANGE_CLASSES: Record<string, AddressClass> = {
  unicast: 'public',
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link_local',
  carrierGradeNat: 'carrier_grade_nat',
  uniqueLocal: 'unique_local',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
};

const v4 = (b: number[]) => new ipaddr.IPv4([b[0]!, b[1]!, b[2]!, b[3]!]);

/** RFC 6052: the IPv4 address after a prefix of `length` bits, skipping bits 64 to 71 (the `u` octet). */
function rfc6052Ipv4(bytes: number[], length: 32 | 40 | 48 | 56 | 64 | 96): ipaddr.IPv4 {
  const octets = bytes.slice(length / 8).filter((_, i) => length / 8 + i !== 8);
  return v4(octets);
}

/**
 * The IPv4 addresses an IPv6 address carries, by which it must be judged: whatever the IPv6
 * form, the packets end up at (or tunnel through) these. Empty for an address of none of the forms.
 *
 * - `::a.b.c.d` (IPv4-compatible, ::/96, deprecated by RFC 4291 but still routed by some stacks);
 * - `::ffff:a.b.c.d` (IPv4-mapped) and `::ffff:0:a.b.c.d` (IPv4-translated, RFC 6145);
 * - `64:ff9b::a.b.c.d` (NAT64 well-known prefix, RFC 6052) and `64:ff9b:1::/48` (local-use NAT64,
 *   RFC 8215, whose prefix may be 48 to 96 bits long: every possible position counts);
 * - `2002:aabb:ccdd::/48` (6to4, RFC 3056);
 * - `2001:0:ssss:ssss:…:cccc:cccc` (Teredo, RFC 4380): the server, and the client stored inverted;
 * - `…:0:5efe:a.b.c.d` and `…:200:5efe:a.b.c.d` (ISATAP interface identifiers, RFC 5214).
 */
export function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const bytes = address.toByteArray();
  const words = address.parts;
  const low = bytes.slice(12);
  if (words.slice(0, 6).every((w) => w === 0)) return [v4(low)];
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return [v4(low)];
  if (words.slice(0, 4).every((w) => w === 0) && words[4] === 0xffff && words[5] === 0) return [v4(low)];
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0)) return [rfc6052Ipv4(bytes, 96)];
  if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) return ([96, 64, 56, 48] as const).map((length) => rfc6052Ipv4(bytes, length));
  if (words[0] === 0x2002) return [v4(bytes.slice(2, 6))];
  if (words[0] === 0x2001 && words[1] === 0) return [v4(bytes.slice(4, 8)), v4(low.map((b) => b ^ 0xff))];
  if ((words[4] === 0 || words[4] === 0x200) && words[5] === 0x5efe) return [v4(low)];
  return [];
}

function classifyIpv4(address: ipaddr.IPv4): AddressClass {
  return RANGE_CLASSES[address.range()] ?? 'reserved';
}

/**
 * Classifies an IP address, v4 or v6. An IPv6 address that carries an IPv4 address (mapped,
 * compatible, NAT64, 6to4, Teredo, ISATAP: see `embeddedIpv4`) is judged by the IPv4 inside it,
 * the least public one when it carries several. Pure: no DNS.
 */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'invalid';
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return classifyIpv4(parsed as ipaddr.IPv4);
  const range = parsed.range();
  const own = RANGE_CLASSES[range] ?? 'reserved';
  // Only where the IPv6 range is a way to an IPv4 one: `::` and `::1` are themselves, and an
  // ISATAP identifier under a link-local or unique-local prefix stays link-local or unique-local.
  if (!CARRIER_RANGES.has(range)) return own;
  const carried = embeddedIpv4(parsed as ipaddr.IPv6).map(classifyIpv4);
  if (carried.length) return carried.find((c) => c !== 'public') ?? 'public';
  return own;
}

/** ipaddr.js ranges whose addresses may carry an IPv4 address (`unicast`: ::/96 and ISATAP). */
const CARRIER_RANGES = new Set(['unicast', 'ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/** True when the address may be reached without ALLOW_PRIVATE_NETWORK_TARGETS. */
export function isPublicAddress(address: string): boolean {
  return classifyAddress(address) === 'public';
}

/** True when `host` (a URL's hostname, brackets allowed) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}

/** Why an outbound URL is refused before any DNS lookup; null when its shape is acceptable. */
export type UrlProblem =
  | { code: 'invalid_url'; message: string }
  | { code: 'https_required'; message: string }
  | { code: 'private_network_target'; message: string };

/**
 * Checks what can be decided from the text of an outbound URL alone: it parses, is https (or
 * http when private targets are allowed, for local receivers, or when `allowHttp`: websites to
 * crawl), carries no user info and, when its host is an IP literal, that the address is public (or
 * one of OUTBOUND_ALLOWED_HOSTS). Names are resolved by
 * `src/net/outbound.ts`.
 */
export function checkOutboundUrlShape(url: string, opts: { allowPrivate: boolean; allowHttp?: boolean; exceptions?: HostExceptions | undefined }): UrlProblem | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { code: 'invalid_url', message: 'url must be an absolute URL' };
  }
  // `http://127.0.0.1:80@1.1.1.1/` reads as one host to a person and another to a parser (issue 40, I13);
  // credentials have no place in a URL the service stores and shows either.
  if (parsed.username || parsed.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url.trim())) {
    return { code: 'invalid_url', message: 'url must not carry user info (user:password@ before the host)' };
  }
  if (parsed.protocol !== 'https:' && !((opts.allowPrivate || opts.allowHttp) && parsed.protocol === 'http:')) {
    return { code: 'https_required', message: 'url must use https' };
  }
  if (!parsed.hostname) return { code: 'invalid_url', message: 'url must name a host' };
  if (opts.allowPrivate) return null;
  if (isIpLiteral(parsed.hostname) && !isPublicAddress(parsed.hostname) && !addressExcepted(opts.exceptions, parsed.hostname)) {
    return { code: 'private_network_target', message: privateTargetMessage(parsed.hostname) };
  }
  return null;
}

/** The message of a refused private target, naming the address class (never internals beyond it). */
export function privateTargetMessage(address: string): string {
  return `url resolves to a ${classifyAddress(address).replace(/_/g, '-')} address (${address.replace(/^\[|\]$/g, '')}), which is not allowed: `
    + 'to reach sites and receivers on this machine or a private network, start the service with ALLOW_PRIVATE_NETWORK_TARGETS=true '
    + '(or name the host in OUTBOUND_ALLOWED_HOSTS)';
}

/**
 * OUTBOUND_ALLOWED_HOSTS, parsed: the hosts and address ranges outbound requests may reach although
 * they are not public (an intranet site to crawl, a webhook receiver on the private network, a
 * local test server). A name is trusted whatever it resolves to; an address or CIDR range admits
 * the addresses in it, whatever name led there.
 */
export interface HostExceptions {
  /** Lower-case names without a trailing dot; `*.corp.example` as the suffix `.corp.example`. */
  readonly names: readonly string[];
  readonly ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

/**
 * Reads a comma-separated list such as `intranet.example, *.corp.example, 10.1.0.0/16, 127.0.0.1, fd00::/8`.
 * Throws an Error naming the first entry that is neither a host name nor an address or range.
 */
export function parseHostExceptions(text: string | undefined): HostExceptions {
  const names: string[] = [];
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim().toLowerCase().replace(/^\[|\]$/g, '');
    if (!entry) continue;
    if (entry.includes('/')) {
      try {
        ranges.push(ipaddr.parseCIDR(entry));
      } catch {
        throw new Error(`"${raw.trim()}" is not an address range (CIDR)`);
      }
    } else if (ipaddr.isValid(entry)) {
      const address = ipaddr.parse(entry);
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.?$/.test(entry)) {
      names.push(entry.replace(/\.$/, '').replace(/^\*/, ''));
    } else {
      throw new Error(`"${raw.trim()}" is neither a host name nor an address`);
    }
  }
  return { names, ranges };
}

/** True when OUTBOUND_ALLOWED_HOSTS names `hostname` (a name; an IP literal is judged by `addressExcepted`). */
export function hostExcepted(exceptions: HostExceptions | undefined, hostname: string): boolean {
  if (!exceptions?.names.length || isIpLiteral(hostname)) return false;
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return exceptions.names.some((n) => (n.startsWith('.') ? name.endsWith(n) : name === n));
}

/** True when `address` falls in one of OUTBOUND_ALLOWED_HOSTS's addresses or ranges. */
export function addressExcepted(exceptions: HostExceptions | undefined, address: string): boolean {
  if (!exceptions?.ranges.length) return false;
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.process(bare); // an IPv4-mapped IPv6 address matches its IPv4 range
  return exceptions.ranges.some(([range, bits]) => {
    if (range.kind() === parsed.kind()) return parsed.match(range, bits);
    return false;
  });
}
