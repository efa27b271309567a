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
// 6to4, Teredo, NAT64, ...) is `reserved`: it either reaches nothing or tunnels to an IPv4 we
// would have to classify again, so refusing it is the safe answer.
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

/**
 * Classifies an IP address (v4, v6, or v4-mapped v6 such as `::ffff:10.0.0.1`, which is
 * judged as the IPv4 inside it). Pure: no DNS.
 */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return 'invalid';
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return RANGE_CLASSES[parsed.range()] ?? 'reserved';
}

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
 * crawl) and, when its host is an IP
 * literal, that the address is public. Names are resolved by
 * `src/net/outbound.ts`.
 */
export function checkOutboundUrlShape(url: string, opts: { allowPrivate: boolean; allowHttp?: boolean }): UrlProblem | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { code: 'invalid_url', message: 'url must be an absolute URL' };
  }
  if (parsed.protocol !== 'https:' && !((opts.allowPrivate || opts.allowHttp) && parsed.protocol === 'http:')) {
    return { code: 'https_required', message: 'url must use https' };
  }
  if (!parsed.hostname) return { code: 'invalid_url', message: 'url must name a host' };
  if (opts.allowPrivate) return null;
  if (isIpLiteral(parsed.hostname) && !isPublicAddress(parsed.hostname)) {
    return { code: 'private_network_target', message: privateTargetMessage(parsed.hostname) };
  }
  return null;
}

/** The message of a refused private target, naming the address class (never internals beyond it). */
export function privateTargetMessage(address: string): string {
  return `url resolves to a ${classifyAddress(address).replace(/_/g, '-')} address (${address.replace(/^\[|\]$/g, '')}), which is not allowed`;
}
