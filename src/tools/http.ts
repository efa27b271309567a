import type { Dispatcher } from 'undici';
import { undici } from '../net/undici.ts';
import { createOutboundAgent, OutboundTargetError, outboundPolicy } from '../net/outbound.ts';
import { describeFailure } from '../events/attempt.ts';
import { signatureHeader } from '../events/signing.ts';
import { AGENT_TOOL_LIMITS, type ToolCallStatus } from '../schemas/agent-tools.ts';

/**
 * One HTTP call of an agent tool: signed with Standard Webhooks headers (`webhook-id` is the
 * call's id, the same on every retry, so a tool can dedupe), bounded by the tool's timeout and a
 * 64 KB answer, through the outbound SSRF guard. Never throws: every failure is an outcome.
 */

const USER_AGENT = 'AgentManagementService-Tools/1.0';

export interface ToolRequest {
  callId: string;
  toolName: string;
  conversationId: string | null;
  url: string;
  method: 'POST' | 'GET';
  timeoutSeconds: number;
  secrets: string[];
  args: Record<string, unknown>;
}

/** What a call came to: the answer (parsed JSON) when ok, a short secret-free reason otherwise. */
export interface ToolOutcome {
  status: Exclude<ToolCallStatus, 'mocked'>;
  durationMs: number;
  httpStatus: number | null;
  result: unknown;
  error: string | null;
  /** Whether another attempt may be made: never after a POST got an answer (it may have acted). */
  retryable: boolean;
}

/**
 * An outcome as it travels back through Temporal: the tool's answer sealed (it may name the
 * visitor), like the arguments going out, so the workflow history keeps no readable copy of
 * either beyond the conversation's own record.
 */
export type SealedToolOutcome = Omit<ToolOutcome, 'result'> & { sealedResult: string | null };

/** The SecretBox contexts of a call's sealed arguments and answer. */
export const toolArgsContext = (callId: string) => `tool_calls.args:${callId}`;
export const toolResultContext = (callId: string) => `tool_calls.result:${callId}`;

/** Address-level failures where the request cannot have reached the tool: safe to repeat, even a POST. */
const NOT_SENT = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);

/** GET arguments as query parameters: strings as they are, anything else as JSON. */
function withQuery(url: string, args: Record<string, unknown>): string {
  const target = new URL(url);
  for (const [key, value] of Object.entries(args)) {
    if (value !== undefined) target.searchParams.set(key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return target.toString();
}

/** Reads at most the answer limit; 'too_large' past it (the rest is dropped, the connection closed). */
async function readCapped(body: Dispatcher.ResponseData['body']): Promise<string | 'too_large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > AGENT_TOOL_LIMITS.answerBytes) return 'too_large';
      chunks.push(chunk as Buffer);
    }
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseAnswer(text: string): { ok: true; value: unknown } | { ok: false } {
  if (!text.trim()) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

const isTimeout = (err: unknown) => {
  const e = err as { name?: string; code?: string; cause?: { name?: string } };
  return e.name === 'TimeoutError' || e.cause?.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT';
};

/** Makes one call. */
export async function sendToolRequest(dispatcher: Dispatcher, request: ToolRequest): Promise<ToolOutcome> {
  const started = Date.now();
  const timestamp = Math.floor(started / 1000);
  const body = request.method === 'POST' ? JSON.stringify(request.args) : '';
  const elapsed = () => Date.now() - started;
  try {
    const res = await undici().request(request.method === 'GET' ? withQuery(request.url, request.args) : request.url, {
      method: request.method, dispatcher, signal: AbortSignal.timeout(request.timeoutSeconds * 1000),
      ...(request.method === 'POST' ? { body } : {}),
      headers: {
        ...(request.method === 'POST' ? { 'content-type': 'application/json' } : {}),
        accept: 'application/json', 'user-agent': USER_AGENT,
        'webhook-id': request.callId, 'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(request.secrets, request.callId, timestamp, body),
        'x-agent-tool': request.toolName,
        ...(request.conversationId ? { 'x-conversation-id': request.conversationId } : {}),
      },
    });
    const text = await readCapped(res.body);
    const base = { durationMs: elapsed(), httpStatus: res.statusCode, retryable: false };
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const retryable = request.method === 'GET' && (res.statusCode >= 500 || res.statusCode === 429);
      const redirect = res.statusCode >= 300 && res.statusCode < 400 ? ': redirects are not followed' : '';
      return { ...base, status: 'error', result: null, error: `HTTP ${res.statusCode}${redirect}`, retryable };
    }
    if (text === 'too_large') return { ...base, status: 'error', result: null, error: `the answer is over ${AGENT_TOOL_LIMITS.answerBytes / 1024} KB` };
    const parsed = parseAnswer(text);
    if (!parsed.ok) return { ...base, status: 'error', result: null, error: 'the answer is not JSON' };
    return { ...base, status: 'ok', result: parsed.value, error: null };
  } catch (err) {
    if (isTimeout(err)) {
      return { status: 'timeout', durationMs: elapsed(), httpStatus: null, result: null, error: `no answer within ${request.timeoutSeconds} s`, retryable: false };
    }
    const refused = err instanceof OutboundTargetError || (err as { cause?: unknown }).cause instanceof OutboundTargetError;
    const code = (err as { code?: string }).code ?? ((err as { cause?: { code?: string } }).cause?.code);
    const retryable = !refused && (request.method === 'GET' || (code !== undefined && NOT_SENT.has(code)));
    return { status: 'error', durationMs: elapsed(), httpStatus: null, result: null, error: describeFailure(err), retryable };
  }
}

/** The pool tool calls to users' URLs go through, each connection pinned to the address the SSRF guard checked. */
export function createToolAgent(config: { ALLOW_PRIVATE_NETWORK_TARGETS: boolean; OUTBOUND_ALLOWED_HOSTS?: string | undefined }): Dispatcher {
  return createOutboundAgent(outboundPolicy(config), { connections: 16 });
}

/** The pool for the sandbox echo endpoint: the service's own origin, which an operator configured. */
export function createSandboxAgent(): Dispatcher {
  return createOutboundAgent({ allowPrivate: true }, { connections: 4 });
}

/** The service's own echo endpoint, where `sandbox` calls go. */
export function sandboxEchoUrl(config: { PUBLIC_BASE_URL?: string | undefined; PORT: number }): string {
  const origin = config.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? `http://127.0.0.1:${config.PORT}`;
  return `${origin}/api/v1/public/tool-sandbox/echo`;
}
