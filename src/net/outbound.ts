import { lookup } from 'node:dns/promises';
import type { Agent, buildConnector } from 'undici';
import { undici } from './undici.ts';
import { AppError, fieldError } from '../errors.ts';
import {
  addressExcepted, checkOutboundUrlShape, classifyAddress, hostExcepted, isIpLiteral, parseHostExceptions, privateTargetMessage,
  type HostExceptions,
} from '../domain/network.ts';

/**
 * Requests the service makes to URLs its users give (webhooks, crawls) go through here, so that
 * without ALLOW_PRIVATE_NETWORK_TARGETS they can never reach this machine or its network:
 * names are resolved once, every address is checked, and the connection goes to the checked
 * address itself (a second lookup could answer differently: DNS rebinding).
 */

export interface OutboundPolicy {
  /** ALLOW_PRIVATE_NETWORK_TARGETS: reach loopback and private ranges too (local development, tests). */
  allowPrivate: boolean;
  /** OUTBOUND_ALLOWED_HOSTS: names and ranges reachable although not public. */
  exceptions?: HostExceptions | undefined;
}

const policies = new WeakMap<object, OutboundPolicy>();

/**
 * The deployment's outbound policy: ALLOW_PRIVATE_NETWORK_TARGETS and OUTBOUND_ALLOWED_HOSTS (read
 * once per configuration object; loadConfig has already refused a malformed list).
 */
export function outboundPolicy(config: { ALLOW_PRIVATE_NETWORK_TARGETS: boolean; OUTBOUND_ALLOWED_HOSTS?: string | undefined }): OutboundPolicy {
  let policy = policies.get(config);
  if (!policy) {
    policy = { allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS, exceptions: parseHostExceptions(config.OUTBOUND_ALLOWED_HOSTS) };
    policies.set(config, policy);
  }
  return policy;
}

/** A target refused by the policy, or a name that does not resolve. */
export class OutboundTargetError extends Error {
  readonly code: 'private_network_target' | 'unresolvable_host';
  constructor(code: OutboundTargetError['code'], message: string) {
    super(message);
    this.name = 'OutboundTargetError';
    this.code = code;
  }
}

export interface ResolvedAddress { address: string; family: 4 | 6 }

const DNS_TIMEOUT_MS = 5_000;

async function lookupAll(hostname: string): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutboundTargetError('unresolvable_host', `${hostname} did not resolve within ${DNS_TIMEOUT_MS} ms`)), DNS_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(hostname, { all: true, verbatim: true }), timeout]);
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch (err) {
    if (err instanceof OutboundTargetError) throw err;
    throw new OutboundTargetError('unresolvable_host', `${hostname} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves a host name (or takes an IP literal as it is) and checks every address against the
 * policy. A name with one private address among public ones is refused as a whole: the
 * resolver may hand out any of them. A name or address in OUTBOUND_ALLOWED_HOSTS passes.
 */
export async function resolveOutboundHost(hostname: string, policy: OutboundPolicy): Promise<ResolvedAddress[]> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  const addresses = isIpLiteral(bare) ? [{ address: bare, family: bare.includes(':') ? 6 : 4 } as ResolvedAddress] : await lookupAll(bare);
  if (addresses.length === 0) throw new OutboundTargetError('unresolvable_host', `${bare} does not resolve`);
  if (!policy.allowPrivate && !hostExcepted(policy.exceptions, bare)) {
    const refused = addresses.find((a) => classifyAddress(a.address) !== 'public' && !addressExcepted(policy.exceptions, a.address));
    if (refused) throw new OutboundTargetError('private_network_target', privateTargetMessage(refused.address));
  }
  return addresses;
}

/**
 * Checks a URL a user submits (for example a webhook endpoint) and throws the 400 the API
 * answers: `validation_error` on `field` for a malformed, non-https or unresolvable URL,
 * `private_network_target` for one that reaches a private address. With private targets
 * allowed no lookup is made (local receivers, offline development).
 */
export async function assertOutboundUrl(url: string, field: string, policy: OutboundPolicy & {
  /** Accept http as well as https (a website to crawl, unlike a webhook, need not be https). */
  allowHttp?: boolean;
  /**
   * Accept a name that does not resolve now (a crawl reports it as the site's error later);
   * one that resolves to a private address is refused either way.
   */
  acceptUnresolvable?: boolean;
}): Promise<void> {
  const problem = checkOutboundUrlShape(url, policy);
  if (problem?.code === 'private_network_target') throw new AppError(400, 'private_network_target', problem.message);
  if (problem) throw fieldError(field, problem.code, problem.message);
  if (policy.allowPrivate) return;
  try {
    await resolveOutboundHost(new URL(url).hostname, policy);
  } catch (err) {
    if (!(err instanceof OutboundTargetError)) throw err;
    if (err.code === 'private_network_target') throw new AppError(400, 'private_network_target', err.message);
    if (!policy.acceptUnresolvable) throw fieldError(field, 'unresolvable_host', err.message);
  }
}

/**
 * An undici dispatcher for user-given URLs. Each new connection resolves the host itself,
 * checks every address, then connects to the first checked address with the original name as
 * TLS servername (so certificates are verified against the name) while undici keeps the
 * original Host header. It follows no redirects (undici never does without an interceptor).
 */
export function createOutboundAgent(policy: OutboundPolicy, opts: { connections?: number; connectTimeoutMs?: number } = {}): Agent {
  const connectTimeout = opts.connectTimeoutMs ?? 10_000;
  const { Agent: UndiciAgent, buildConnector: connector } = undici();
  const base = connector({ timeout: connectTimeout });
  const connect: buildConnector.connector = (options, callback) => {
    const hostname = options.hostname.replace(/^\[|\]$/g, '');
    resolveOutboundHost(hostname, policy).then(([target]) => {
      const servername = options.servername ?? (isIpLiteral(hostname) ? undefined : hostname);
      base({ ...options, hostname: target!.address, ...(servername ? { servername } : {}) }, callback);
    }, (err: Error) => callback(err, null));
  };
  return new UndiciAgent({ connect, connections: opts.connections ?? 16, keepAliveTimeout: 10_000 });
}
