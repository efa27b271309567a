import type { BrowserContext, LaunchOptions, Route } from 'playwright-core';
import { startGuardProxy, type GuardProxy } from '../net/guard-proxy.ts';
import { OutboundTargetError, resolveOutboundHost, type OutboundPolicy } from '../net/outbound.ts';
import { MAX_BLOCKED_REQUESTS, type BlockedRequest } from '../schemas/simulations.ts';

/**
 * The outbound policy of the simulation browser (issue 40, D12): what a page opened by a web
 * simulation may make Chromium fetch. Two layers, both applying the policy crawls and webhooks have
 * (`src/net/outbound.ts`, ALLOW_PRIVATE_NETWORK_TARGETS and OUTBOUND_ALLOWED_HOSTS):
 *
 * - Chromium's only way out is a guard proxy on 127.0.0.1 (`src/net/guard-proxy.ts`) that resolves
 *   each host itself, refuses private addresses and connects to the address it checked: Chromium
 *   resolves no name (`--host-resolver-rules`), so a name that answers a public address to the check
 *   and a private one to the browser (DNS rebinding) gets nowhere, and neither do redirect hops,
 *   frames, images, scripts, fetches, WebSockets and anything Playwright's routing does not see.
 * - Playwright routing on the context checks each request's URL first: schemes other than http(s),
 *   data: and blob: are refused, and on the service's own origin (which serves the embed script and
 *   the widget's API, and may well be private) only those paths may be asked for.
 *
 * Service workers are blocked (their requests would escape the routing) and WebRTC may not send UDP
 * outside the proxy. Every refusal is counted by origin and reason, for the run's `blocked_requests`.
 */

/** Chromium flags that keep it from reaching the network but through the proxy. */
const GUARD_ARGS = [
  // No name is resolved by Chromium itself: the proxy resolves and checks (it is an IP literal, excluded).
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
  '--dns-prefetch-disable',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--enforce-webrtc-ip-permission-check',
];

/** Paths of this service a simulated page may load: the embed script and the widget's public API. */
const SERVICE_PATHS = (path: string) => path === '/embed.js' || path.startsWith('/api/v1/public/');

export interface BrowserGuard {
  /** Chromium's launch options: the proxy and the flags. */
  launchOptions: Pick<LaunchOptions, 'proxy' | 'args'>;
  /** Routes every request of the context through the URL checks. */
  attach(context: BrowserContext): Promise<void>;
  /** What was refused so far, by origin and reason, the most frequent first (at most MAX_BLOCKED_REQUESTS). */
  blocked(): BlockedRequest[];
  close(): Promise<void>;
}

/**
 * Starts the guard of one browser run. `serviceOrigin` is where the embed script and the widget's
 * API are served from (PUBLIC_BASE_URL or the API's own address): reached whatever the policy says,
 * for those paths only.
 */
export async function startBrowserGuard(opts: {
  policy: OutboundPolicy; serviceOrigin: string; onError?: (origin: string, err: Error) => void;
  /** Headers added to the requests made to the service's own origin (the simulation's marker). */
  serviceHeaders?: Record<string, string>;
}): Promise<BrowserGuard> {
  const counts = new Map<string, BlockedRequest>();
  const block = (origin: string, reason: BlockedRequest['reason']) => {
    const key = `${reason} ${origin}`;
    const seen = counts.get(key);
    if (seen) seen.count++;
    else counts.set(key, { origin, reason, count: 1 });
  };
  const proxy: GuardProxy = await startGuardProxy({
    policy: opts.policy,
    trustedOrigins: [opts.serviceOrigin],
    onBlocked: (origin, reason) => { if (reason === 'private_network_target') block(origin, reason); },
    ...(opts.onError ? { onError: opts.onError } : {}),
  });

  async function check(route: Route): Promise<void> {
    let url: URL;
    try {
      url = new URL(route.request().url());
    } catch {
      return route.abort('blockedbyclient');
    }
    if (url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      block(url.protocol, 'scheme_not_allowed');
      return route.abort('blockedbyclient');
    }
    if (url.origin === opts.serviceOrigin) {
      if (SERVICE_PATHS(url.pathname)) {
        return opts.serviceHeaders ? route.continue({ headers: { ...route.request().headers(), ...opts.serviceHeaders } }) : route.continue();
      }
      block(url.origin, 'path_not_allowed');
      return route.abort('blockedbyclient');
    }
    try {
      await resolveOutboundHost(url.hostname, opts.policy);
    } catch (err) {
      if (!(err instanceof OutboundTargetError)) throw err;
      if (err.code === 'private_network_target') {
        block(url.origin, 'private_network_target');
        return route.abort('blockedbyclient');
      }
      return route.abort('namenotresolved');
    }
    // The proxy checks again as it connects, and connects to the address it checked.
    return route.continue();
  }

  return {
    launchOptions: { proxy: { server: proxy.url }, args: GUARD_ARGS },
    async attach(context) {
      await context.route('**', (route) => check(route).catch(() => route.abort('failed').catch(() => undefined)));
    },
    blocked: () => [...counts.values()].sort((a, b) => b.count - a.count).slice(0, MAX_BLOCKED_REQUESTS),
    close: () => proxy.close(),
  };
}
