import { listPage, patchFields, type Db } from './index.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { newId } from '../ids.ts';
import {
  AGENT_TOOL_LIMITS, AgentToolPatchSchema, type AgentTool, type AgentToolCall, type AgentToolPatch, type AgentToolWithSecret, type ManifestTool,
  type ToolCallStatus, type ToolMode,
} from '../schemas/agent-tools.ts';

interface ToolRow {
  id: string; name: string; description: string | null; parameters: Record<string, unknown>; url: string; method: AgentTool['method'];
  timeout_seconds: number; call_on: AgentTool['call_on']; enabled: boolean; created_at: Date; updated_at: Date;
}

// Never the sealed secrets: only loadToolTarget opens them, to sign.
const COLUMNS = ['id', 'name', 'description', 'parameters', 'url', 'method', 'timeout_seconds', 'call_on', 'enabled', 'created_at', 'updated_at'];

/** How long a tool's call log keeps a call. */
const CALL_LOG_RETENTION = '30 days';

/** How long the secret replaced by a rotation still signs, as for webhook endpoints. */
const PREVIOUS_SECRET_GRACE = '24 hours';

/** Sealed with the tool's id as context: a sealed value copied onto another row does not open there. */
const secretContext = (toolId: string) => `agent_tools.secret:${toolId}`;

const toTool = (row: ToolRow): AgentTool => ({
  id: row.id, name: row.name, description: row.description, parameters: row.parameters, url: row.url, method: row.method,
  timeout_seconds: row.timeout_seconds, call_on: row.call_on, enabled: row.enabled,
  created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
});

/** A complete tool input: create's body with its defaults applied, or a manifest's tool. */
export type ToolInput = ManifestTool;

/**
 * A new tool with its (sealed) secret; 'limit' when the agent holds the most tools already,
 * 'duplicate' when it has one of that name. The agent row is locked, so the count stays exact.
 */
export async function insertAgentTool(db: Db, secrets: SecretBox, orgId: string, agentId: string, input: ToolInput, secret: string):
  Promise<AgentToolWithSecret | 'limit' | 'duplicate'> {
  await db`select id from agents where id = ${agentId} and org_id = ${orgId} for update`;
  const [count] = await db<{ n: number; taken: boolean }[]>`
    select count(*)::int as n, coalesce(bool_or(name = ${input.name}), false) as taken from agent_tools where agent_id = ${agentId}`;
  if (count!.taken) return 'duplicate';
  if (count!.n >= AGENT_TOOL_LIMITS.toolsPerAgent) return 'limit';
  const id = newId();
  const [row] = await db<ToolRow[]>`
    insert into agent_tools (id, org_id, agent_id, name, description, parameters, url, method, timeout_seconds, call_on, enabled, secret_sealed)
    values (${id}, ${orgId}, ${agentId}, ${input.name}, ${input.description ?? null}, ${db.json(input.parameters as never)}, ${input.url},
      ${input.method}, ${input.timeout_seconds}, ${input.call_on}, ${input.enabled}, ${secrets.seal(secret, secretContext(id))})
    returning ${db(COLUMNS)}`;
  return { ...toTool(row!), secret };
}

export async function findAgentTool(db: Db, orgId: string, agentId: string, id: string): Promise<AgentTool | null> {
  const [row] = await db<ToolRow[]>`select ${db(COLUMNS)} from agent_tools where id = ${id} and agent_id = ${agentId} and org_id = ${orgId}`;
  return row ? toTool(row) : null;
}

export async function listAgentToolsPage(db: Db, orgId: string, agentId: string, q: { limit: number; offset: number }): Promise<{ data: AgentTool[]; total: number }> {
  return listPage(db, {
    ...q, columns: db(COLUMNS), from: db`from agent_tools where agent_id = ${agentId} and org_id = ${orgId}`, order: db`created_at desc, id desc`,
  }, toTool);
}

/** Every tool of the agent, oldest first (export, clone, and the runtime's enabled ones). */
export async function listAgentTools(db: Db, agentId: string, opts: { enabledOnly?: boolean } = {}): Promise<AgentTool[]> {
  const enabled = opts.enabledOnly ? db`and enabled` : db``;
  const rows = await db<ToolRow[]>`select ${db(COLUMNS)} from agent_tools where agent_id = ${agentId} ${enabled} order by created_at, id`;
  return rows.map(toTool);
}

/** Applies the fields present; null when absent, 'duplicate' when the new name is another tool's. */
export async function updateAgentTool(db: Db, orgId: string, agentId: string, id: string, patch: AgentToolPatch): Promise<AgentTool | 'duplicate' | null> {
  const fields = patchFields(AgentToolPatchSchema, patch, ['parameters']);
  if (patch.parameters !== undefined) fields.parameters = db.json(patch.parameters as never);
  if (Object.keys(fields).length === 0) return findAgentTool(db, orgId, agentId, id);
  if (patch.name !== undefined) {
    const [taken] = await db`select 1 from agent_tools where agent_id = ${agentId} and name = ${patch.name} and id <> ${id}`;
    if (taken) return 'duplicate';
  }
  try {
    const [row] = await db<ToolRow[]>`
      update agent_tools set ${db(fields)}, updated_at = now()
      where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning ${db(COLUMNS)}`;
    return row ? toTool(row) : null;
  } catch (err) {
    // Two renames at once: the unique (agent_id, name) decides.
    if ((err as { code?: string }).code === '23505') return 'duplicate';
    throw err;
  }
}

/** Replaces the secret; the old one keeps signing for 24 hours. Null when absent. */
export async function rotateAgentToolSecret(db: Db, secrets: SecretBox, orgId: string, agentId: string, id: string, secret: string): Promise<AgentToolWithSecret | null> {
  const [row] = await db<ToolRow[]>`
    update agent_tools set previous_secret_sealed = secret_sealed, secret_sealed = ${secrets.seal(secret, secretContext(id))},
      previous_secret_expires_at = now() + ${PREVIOUS_SECRET_GRACE}::interval, updated_at = now()
    where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? { ...toTool(row), secret } : null;
}

export async function deleteAgentTool(db: Db, orgId: string, agentId: string, id: string): Promise<boolean> {
  const rows = await db`delete from agent_tools where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

/** An agent's tools (and their call log) go at once with its delete. */
export async function deleteAgentToolsOfAgent(db: Db, agentId: string): Promise<void> {
  await db`delete from agent_tools where agent_id = ${agentId}`;
}

/** Copies tools onto an agent (clone, import), each with a new secret from `newSecret`; at most the limit. */
export async function insertAgentTools(db: Db, secrets: SecretBox, orgId: string, agentId: string, tools: ToolInput[], newSecret: () => string): Promise<void> {
  for (const [i, tool] of tools.slice(0, AGENT_TOOL_LIMITS.toolsPerAgent).entries()) {
    const id = newId();
    // Distinct creation times keep the source's order.
    const at = new Date(Date.now() + i);
    await db`insert into agent_tools (id, org_id, agent_id, name, description, parameters, url, method, timeout_seconds, call_on, enabled, secret_sealed, created_at, updated_at)
      values (${id}, ${orgId}, ${agentId}, ${tool.name}, ${tool.description ?? null}, ${db.json(tool.parameters as never)}, ${tool.url}, ${tool.method},
        ${tool.timeout_seconds}, ${tool.call_on}, ${tool.enabled}, ${secrets.seal(newSecret(), secretContext(id))}, ${at}, ${at})`;
  }
}

/** What one HTTP call needs; the secrets never leave the activity that signs. */
export interface ToolTarget { id: string; name: string; url: string; method: AgentTool['method']; timeoutSeconds: number; secrets: string[] }

export async function loadToolTarget(db: Db, secretBox: SecretBox, toolId: string): Promise<ToolTarget | null> {
  const [row] = await db<{
    id: string; name: string; url: string; method: AgentTool['method']; timeout_seconds: number;
    secret_sealed: string; previous_secret_sealed: string | null; previous_valid: boolean;
  }[]>`
    select id, name, url, method, timeout_seconds, secret_sealed, previous_secret_sealed,
      coalesce(previous_secret_expires_at > now(), false) as previous_valid
    from agent_tools where id = ${toolId}`;
  if (!row) return null;
  const open = (sealed: string) => secretBox.open(sealed, secretContext(row.id));
  const secrets = row.previous_secret_sealed && row.previous_valid ? [open(row.secret_sealed), open(row.previous_secret_sealed)] : [open(row.secret_sealed)];
  return { id: row.id, name: row.name, url: row.url, method: row.method, timeoutSeconds: row.timeout_seconds, secrets };
}

// ---- the call log and the conversation's mode

export async function insertToolCallLog(db: Db, entry: {
  orgId: string; agentId: string; toolId: string; conversationId: string | null; status: ToolCallStatus; durationMs: number; at: string;
}): Promise<void> {
  await db`insert into agent_tool_calls (id, org_id, agent_id, tool_id, conversation_id, status, duration_ms, created_at)
    select ${newId()}, ${entry.orgId}, ${entry.agentId}, ${entry.toolId}, ${entry.conversationId}, ${entry.status}, ${entry.durationMs}, ${entry.at}
    where exists (select 1 from agent_tools where id = ${entry.toolId})`;
  // The log is of recent calls: older entries of this tool go as new ones come (an index range).
  await db`delete from agent_tool_calls where tool_id = ${entry.toolId} and created_at < now() - ${CALL_LOG_RETENTION}::interval`;
}

export async function listToolCallsPage(db: Db, orgId: string, toolId: string, q: { limit: number; offset: number }): Promise<{ data: AgentToolCall[]; total: number }> {
  return listPage(db, {
    ...q, columns: db`id, conversation_id, status, duration_ms, created_at`,
    from: db`from agent_tool_calls where tool_id = ${toolId} and org_id = ${orgId}`, order: db`created_at desc, id desc`,
  }, (row: { id: string; conversation_id: string | null; status: ToolCallStatus; duration_ms: number; created_at: Date }) => ({
    id: row.id, conversation_id: row.conversation_id, status: row.status, duration_ms: row.duration_ms, created_at: row.created_at.toISOString(),
  }));
}

export async function conversationToolMode(db: Db, conversationId: string): Promise<ToolMode> {
  const [row] = await db<{ tool_mode: ToolMode }[]>`select tool_mode from conversations where id = ${conversationId}`;
  return row?.tool_mode ?? 'live';
}

/** Sets how a conversation's tool calls go out (a simulation's `tool_mode`). */
export async function setConversationToolMode(db: Db, conversationId: string, mode: ToolMode): Promise<void> {
  await db`update conversations set tool_mode = ${mode} where id = ${conversationId}`;
}
