import type { Dispatcher } from 'undici';
import { undici } from '../net/undici.ts';
import type { Db } from '../db/index.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { loadAttemptTarget, type AttemptTarget } from '../db/webhooks.ts';
import { createOutboundAgent, OutboundTargetError, outboundPolicy } from '../net/outbound.ts';
import { signatureHeader } from './signing.ts';

/**
 * One HTTP attempt of a delivery, shared by the two paths that make one: the dispatcher (first
 * attempts, src/events/dispatcher.ts) and the delivery workflow's activity (retries).
 */

/** A 2xx within this many milliseconds is success; anything slower is a failed attempt. */
export const DELIVERY_TIMEOUT_MS = 15_000;
const EXCERPT_BYTES = 1024;
const USER_AGENT = 'AgentManagementService-Webhooks/1.0';

/** What one HTTP attempt came to; no secret and at most 1 KiB of the answer. */
export interface AttemptOutcome {
  kind: 'attempted';
  ok: boolean;
  at: string;
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  durationMs: number;
}
/** No attempt was made: the delivery is gone (endpoint deleted) or its endpoint is disabled. */
export type AttemptSkipped = { kind: 'gone' } | { kind: 'endpoint_disabled' };

/** The body every attempt of one event sends, byte for byte. */
export function deliveryBody(event: AttemptTarget['event']): string {
  return JSON.stringify({ id: event.id, type: event.type, created_at: event.created_at.toISOString(), data: event.data });
}

/** Reads at most `limit` bytes of an answer and drops the rest (a receiver may answer a lot). */
async function readExcerpt(body: Dispatcher.ResponseData['body'], limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= limit) break;
    }
  } catch {
    // A body cut short still leaves what arrived; the status already decided the attempt.
  } finally {
    body.destroy();
  }
  return size === 0 ? null : Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** A short, secret-free reason for a failed request. */
export function describeFailure(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
  if (err instanceof OutboundTargetError) return `${err.code}: ${err.message}`;
  if (e.cause instanceof OutboundTargetError) return describeFailure(e.cause);
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT') return `timed out after ${DELIVERY_TIMEOUT_MS / 1000} s`;
  const code = e.code ?? (e.cause as { code?: string } | undefined)?.code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused', ECONNRESET: 'connection reset', ENOTFOUND: 'host not found',
    UND_ERR_CONNECT_TIMEOUT: 'connect timed out', UND_ERR_SOCKET: 'connection closed', EHOSTUNREACH: 'host unreachable',
  };
  if (code && known[code]) return known[code]!;
  return (code ?? e.message ?? 'request failed').slice(0, 200);
}

function attemptError(status: number): string | null {
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return `HTTP ${status}: redirects are not followed`;
  return `HTTP ${status}`;
}

/** POSTs one signed attempt of an event to its endpoint. Never throws: every failure is an outcome. */
export async function postAttempt(agent: Dispatcher, target: AttemptTarget): Promise<AttemptOutcome> {
  const started = Date.now();
  const timestamp = Math.floor(started / 1000);
  const body = deliveryBody(target.event);
  const base = { kind: 'attempted' as const, at: new Date(started).toISOString() };
  try {
    const res = await undici().request(target.url, {
      method: 'POST', dispatcher: agent, body, signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json', 'user-agent': USER_AGENT,
        'webhook-id': target.event.id, 'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(target.secrets, target.event.id, timestamp, body),
      },
    });
    const responseExcerpt = await readExcerpt(res.body, EXCERPT_BYTES);
    const error = attemptError(res.statusCode);
    return { ...base, ok: error === null, statusCode: res.statusCode, error, responseExcerpt, durationMs: Date.now() - started };
  } catch (err) {
    return { ...base, ok: false, statusCode: null, error: describeFailure(err), responseExcerpt: null, durationMs: Date.now() - started };
  }
}

/** The pool of keep-alive connections deliveries go through, each pinned to the address the SSRF guard checked. */
export function createDeliveryAgent(config: { ALLOW_PRIVATE_NETWORK_TARGETS: boolean; OUTBOUND_ALLOWED_HOSTS?: string | undefined }, connections = 64): Dispatcher {
  return createOutboundAgent(outboundPolicy(config), { connections });
}

/** One attempt at a loaded target; `endpoint_disabled` when its endpoint is. */
export async function attemptTarget(agent: Dispatcher, target: AttemptTarget): Promise<AttemptOutcome | AttemptSkipped> {
  return target.enabled ? postAttempt(agent, target) : { kind: 'endpoint_disabled' };
}

/** Loads a delivery's target and makes one attempt; `gone` or `endpoint_disabled` when no attempt is due. */
export async function attemptDelivery(deps: { sql: Db; secrets: SecretBox; agent: Dispatcher }, deliveryId: string): Promise<AttemptOutcome | AttemptSkipped> {
  const target = await loadAttemptTarget(deps.sql, deps.secrets, deliveryId);
  return target ? attemptTarget(deps.agent, target) : { kind: 'gone' };
}
