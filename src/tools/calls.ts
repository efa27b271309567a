import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Db } from '../db/index.ts';
import { conversationToolMode, insertToolCallLog, listAgentTools } from '../db/agent-tools.ts';
import { appendToolCalls } from '../db/conversations.ts';
import { PHRASES, type Lang } from '../answers/phrases.ts';
import type { DataField, ToolCall } from '../runtime/types.ts';
import type { AgentTool, ToolCallStatus } from '../schemas/agent-tools.ts';
import { workflowIds } from '../temporal/ids.ts';
import { argumentErrors } from './parameters.ts';
import { callToolUpdate, type ToolCallRequest } from '../../workflows/conversation.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { toolArgsContext, toolResultContext, type ToolOutcome } from './http.ts';
import { createToolSender, sendInProcess, type ToolSender } from './send.ts';

/**
 * Calling an agent's tools during a conversation. The HTTP call itself runs as an activity of
 * the conversation's lifecycle workflow (update `callTool`, whose id is the call's id), so it is
 * retried by Temporal's policy and seen in the Web UI; here the mode is applied, the arguments
 * checked, and the call recorded: in the conversation's `tool_calls` (with its arguments) and in
 * the tool's call log (without them). Where no conversation workflow runs (a simulation's turn,
 * itself an activity), `sendTool` makes the call in process instead, with the same request and
 * the same repeats. So does a conversation that no conversation workflow owns (a campaign call's,
 * which its call's workflow bounds) when `config` is given.
 */

type ToolSenderConfig = Parameters<typeof createToolSender>[0]['config'];

export interface ToolCallDeps {
  sql: Db; temporal: Client; log: Logger; secrets: SecretBox;
  /** Set by activities: the call is made here, in process, not through the conversation workflow. */
  sendTool?: ToolSender | undefined;
  /** What an in-process call needs when the conversation has no workflow to make it. */
  config?: ToolSenderConfig | undefined;
}

/** One in-process sender per pool (its connection pools made on first use), for conversations no workflow owns. */
const fallbackSenders = new WeakMap<Db, ToolSender>();
function fallbackSender(deps: ToolCallDeps & { config: ToolSenderConfig }): ToolSender {
  let sender = fallbackSenders.get(deps.sql);
  if (!sender) fallbackSenders.set(deps.sql, sender = createToolSender({ sql: deps.sql, config: deps.config, secrets: deps.secrets }));
  return sender;
}

export interface ToolCallContext { orgId: string; agentId: string; conversationId: string }

/** What the caller gets back: the record for `tool_calls`, and what goes back to the model. */
export interface ToolCallResult { record: ToolCall; result: unknown; ok: boolean }

const NO_WORKFLOW: ToolOutcome = { status: 'error', durationMs: 0, httpStatus: null, result: null, error: 'the call could not be made', retryable: false };

/** Slack beyond the tool's timeout for the update's round trip through Temporal. */
const UPDATE_MARGIN_MS = 10_000;

/** What the model is told of a failed call: the reason, and what to do about it. */
function failureForModel(error: string): Record<string, unknown> {
  return {
    error,
    instruction: 'This step could not be completed. Tell the visitor so plainly, do not pretend it worked, and offer to connect them with a person or to take their contact details.',
  };
}

/** The call made by the conversation's workflow; null when no such workflow exists (nothing was sent). */
async function viaWorkflow(deps: ToolCallDeps, call: Omit<ToolCallRequest, 'sealedArgs'> & { args: Record<string, unknown> }): Promise<ToolOutcome | null> {
  const { args, ...rest } = call;
  const request: ToolCallRequest = { ...rest, sealedArgs: deps.secrets.seal(JSON.stringify(args), toolArgsContext(call.callId)) };
  try {
    const handle = deps.temporal.workflow.getHandle(workflowIds.conversation(request.conversationId));
    const { sealedResult, ...outcome } = await deps.temporal.withDeadline(Date.now() + request.timeoutSeconds * 1000 * 3 + UPDATE_MARGIN_MS,
      () => handle.executeUpdate(callToolUpdate, { args: [request], updateId: request.callId }));
    return { ...outcome, result: sealedResult === null ? null : JSON.parse(deps.secrets.open(sealedResult, toolResultContext(call.callId))) as unknown };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    deps.log.warn({ err: { name: (err as Error).name, message: (err as Error).message }, conversation_id: request.conversationId, tool_call_id: request.callId },
      'tool call could not go through the conversation workflow');
    return { status: 'error', durationMs: 0, httpStatus: null, result: null, error: 'the call could not be made', retryable: false };
  }
}

/**
 * Calls one tool with `args` in the conversation's mode: `mock` sends nothing and answers `{}`
 * (tools declare no output schema), `sandbox` sends to the service's echo endpoint, `live` to
 * the tool's URL. Arguments that do not fit the tool's parameters are not sent.
 */
export async function callAgentTool(deps: ToolCallDeps, ctx: ToolCallContext, tool: AgentTool, args: Record<string, unknown>): Promise<ToolCallResult> {
  const ts = new Date().toISOString();
  const started = Date.now();
  const mode = await conversationToolMode(deps.sql, ctx.conversationId);
  let status: ToolCallStatus;
  let result: unknown;
  let durationMs: number;
  const invalid = argumentErrors(tool.parameters, args);
  if (invalid.length) {
    status = 'error';
    durationMs = 0;
    result = { error: `the arguments do not fit the tool's parameters: ${invalid.map((e) => e.message).join('; ').slice(0, 500)}`, errors: invalid };
  } else if (mode === 'mock') {
    status = 'mocked';
    result = {};
    durationMs = Date.now() - started;
  } else {
    const request = { callId: `tcall_${randomUUID()}`, toolId: tool.id, conversationId: ctx.conversationId, mode, args };
    const outcome = deps.sendTool
      ? await sendInProcess(deps.sendTool, request)
      : await viaWorkflow(deps, { ...request, timeoutSeconds: tool.timeout_seconds })
        ?? (deps.config ? await sendInProcess(fallbackSender({ ...deps, config: deps.config }), request) : NO_WORKFLOW);
    status = outcome.status;
    durationMs = outcome.durationMs;
    result = outcome.status === 'ok' ? outcome.result : failureForModel(outcome.error ?? 'the call failed');
  }
  await insertToolCallLog(deps.sql, { orgId: ctx.orgId, agentId: ctx.agentId, toolId: tool.id, conversationId: ctx.conversationId, status, durationMs, at: ts });
  return { record: { name: tool.name, args, ts, status, duration_ms: durationMs }, result, ok: status === 'ok' || status === 'mocked' };
}

/** The fields whose capture completes the data schema: the required ones, or every field when none is required. */
export function dataSchemaComplete(schema: DataField[] | null, captured: Record<string, unknown>): boolean {
  const fields = schema ?? [];
  const needed = fields.some((f) => f.required) ? fields.filter((f) => f.required) : fields;
  return needed.length > 0 && needed.every((f) => captured[f.name] !== undefined && captured[f.name] !== null);
}

/** The agent's enabled tools, split by when they are called. */
export async function enabledTools(db: Db, agentId: string): Promise<{ model: AgentTool[]; dataCaptured: AgentTool[] }> {
  const tools = await listAgentTools(db, agentId, { enabledOnly: true });
  return { model: tools.filter((t) => t.call_on === 'model'), dataCaptured: tools.filter((t) => t.call_on === 'data_captured') };
}

/**
 * Calls the `data_captured` tools once the data schema became complete, with the captured fields
 * as arguments. Answers the records for the conversation's `tool_calls`, and the apology to add to
 * the transcript when one failed (null when all went well).
 */
export async function callDataCaptured(deps: ToolCallDeps, ctx: ToolCallContext & { canTransfer: boolean; lang: Lang },
  tools: AgentTool[], schema: DataField[], captured: Record<string, unknown>): Promise<{ records: ToolCall[]; apology: string | null }> {
  const args = Object.fromEntries(schema.filter((f) => captured[f.name] !== undefined).map((f) => [f.name, captured[f.name]]));
  const results: ToolCallResult[] = [];
  for (const tool of tools) results.push(await callAgentTool(deps, ctx, tool, args));
  const p = PHRASES[ctx.lang];
  return {
    records: results.map((r) => r.record),
    apology: results.every((r) => r.ok) ? null : `${p.toolFailed} ${ctx.canTransfer ? p.offerTransfer : p.offerContact}`,
  };
}

/** callDataCaptured, its calls recorded in the conversation at once. */
export async function callDataCapturedTools(deps: ToolCallDeps, ctx: ToolCallContext & { canTransfer: boolean; lang: Lang },
  tools: AgentTool[], schema: DataField[], captured: Record<string, unknown>): Promise<string | null> {
  const { records, apology } = await callDataCaptured(deps, ctx, tools, schema, captured);
  await appendToolCalls(deps.sql, ctx.conversationId, records);
  return apology;
}
