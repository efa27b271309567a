import type { Config } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Db, Sql } from '../db/index.ts';
import { insertAgentTool, rotateAgentToolSecret, updateAgentTool, type ToolInput } from '../db/agent-tools.ts';
import { AppError, validationError } from '../errors.ts';
import { newWebhookSecret } from '../events/signing.ts';
import { assertOutboundUrl, outboundPolicy } from '../net/outbound.ts';
import {
  AGENT_TOOL_LIMITS, RESERVED_TOOL_NAMES, type AgentTool, type AgentToolCreate, type AgentToolPatch, type AgentToolWithSecret,
} from '../schemas/agent-tools.ts';
import type { FieldError } from '../validation.ts';
import { EMPTY_PARAMETERS, parametersErrors } from './parameters.ts';

/**
 * Agent tools as a resource: create, change, rotate. Every check that needs no database (a
 * reserved name, a schema that does not compile, a URL that reaches a private address) runs
 * before anything is written, so a refused request changes nothing.
 */

export interface ToolDeps { sql: Sql; config: Config; secrets: SecretBox }

/** A new tool's signing secret: the same `whsec_` form as a webhook endpoint's. */
export const newToolSecret = newWebhookSecret;

const duplicateName = (name: string, field = 'name') => validationError([{ field, code: 'duplicate_name', message: `this agent already has a tool named ${name}` }]);

/** Field errors of a tool's name and parameters (the schema checks the rest). */
export function toolFieldErrors(input: { name?: string | undefined; parameters?: Record<string, unknown> | undefined }, prefix = ''): FieldError[] {
  const errors: FieldError[] = [];
  if (input.name !== undefined && (RESERVED_TOOL_NAMES as readonly string[]).includes(input.name)) {
    errors.push({ field: `${prefix}name`, code: 'reserved_name', message: `${input.name} is a function of the runtime itself: choose another name` });
  }
  if (input.parameters !== undefined) errors.push(...parametersErrors(input.parameters, `${prefix}parameters`));
  return errors;
}

/** The URL as a webhook's is checked: https, and never a private address unless allowed. */
export async function checkToolUrl(config: Pick<Config, 'ALLOW_PRIVATE_NETWORK_TARGETS' | 'OUTBOUND_ALLOWED_HOSTS'>, url: string, field = 'url'): Promise<void> {
  await assertOutboundUrl(url, field, outboundPolicy(config));
}

/** Create's body with its defaults. */
export function toolInput(body: AgentToolCreate): ToolInput {
  return {
    name: body.name, description: body.description ?? null, parameters: body.parameters ?? { ...EMPTY_PARAMETERS, properties: {} },
    url: body.url, method: body.method ?? 'POST', timeout_seconds: body.timeout_seconds ?? AGENT_TOOL_LIMITS.defaultTimeoutSeconds,
    call_on: body.call_on ?? 'model', enabled: body.enabled ?? true,
  };
}

/** Checks a create body (400 on the first problem); throws nothing when it may be saved. */
export async function checkToolCreate(deps: Pick<ToolDeps, 'config'>, body: AgentToolCreate): Promise<void> {
  const errors = toolFieldErrors(body);
  if (errors.length) throw validationError(errors);
  await checkToolUrl(deps.config, body.url);
}

/** Creates a tool with a new secret, shown once; 409 past the limit, 400 on a taken name. */
export async function createTool(deps: ToolDeps, orgId: string, agentId: string, body: AgentToolCreate): Promise<AgentToolWithSecret> {
  const input = toolInput(body);
  const tool = await deps.sql.begin((tx) => insertAgentTool(tx, deps.secrets, orgId, agentId, input, newToolSecret()));
  if (tool === 'duplicate') throw duplicateName(input.name);
  if (tool === 'limit') throw new AppError(409, 'invalid_state', `this agent already has ${AGENT_TOOL_LIMITS.toolsPerAgent} tools, the most it may have: delete one first`);
  return tool;
}

/** Checks a PATCH body before anything is looked up. */
export async function checkToolPatch(deps: Pick<ToolDeps, 'config'>, patch: AgentToolPatch): Promise<void> {
  const errors = toolFieldErrors(patch);
  if (errors.length) throw validationError(errors);
  if (patch.url !== undefined) await checkToolUrl(deps.config, patch.url);
}

/** Applies a checked PATCH; null when there is no such tool. */
export async function changeTool(db: Db, orgId: string, agentId: string, id: string, patch: AgentToolPatch): Promise<AgentTool | null> {
  const tool = await updateAgentTool(db, orgId, agentId, id, patch);
  if (tool === 'duplicate') throw duplicateName(patch.name!);
  return tool;
}

/** Replaces a tool's secret (the old one signs 24 hours more); null when there is no such tool. */
export async function rotateToolSecret(deps: ToolDeps, orgId: string, agentId: string, id: string): Promise<AgentToolWithSecret | null> {
  return rotateAgentToolSecret(deps.sql, deps.secrets, orgId, agentId, id, newToolSecret());
}
