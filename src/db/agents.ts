import type { Db } from './index.ts';
import { newId, newPublicKey } from '../ids.ts';
import type { Agent, AgentPatch, AgentStatus } from '../schemas/agents.ts';

interface AgentRow {
  id: string; org_id: string; public_key: string; name: string; status: AgentStatus;
  voice: string | null; persona: string | null; site_url: string | null;
  created_at: Date; updated_at: Date;
}

const COLUMNS = ['id', 'org_id', 'public_key', 'name', 'status', 'voice', 'persona', 'site_url', 'created_at', 'updated_at'];

/** The API shape of an agent row. */
export function toAgent(row: AgentRow): Agent {
  return {
    id: row.id, public_key: row.public_key, name: row.name, status: row.status,
    voice: row.voice, persona: row.persona, site_url: row.site_url,
    has_pending_draft: false,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** The widget view of an agent, as `widget.*` events carry it in `data.widget`. */
export interface Widget { id: string; name: string; status: AgentStatus; voice: string | null; persona: string | null; created_at: string }

/**
 * The agent as a widget (agents and widgets are one entity; the widget id is the public key).
 * Until the widgets family lands this is a minimal shape; the widgets issue completes it with
 * the widget as its endpoints return it.
 */
export function toWidget(agent: Agent): Widget {
  return { id: agent.public_key, name: agent.name, status: agent.status, voice: agent.voice, persona: agent.persona, created_at: agent.created_at };
}

export async function insertAgent(db: Db, orgId: string, input: { name: string; site_url?: string | undefined }): Promise<Agent> {
  const status: AgentStatus = input.site_url ? 'draft' : 'active';
  const [row] = await db<AgentRow[]>`
    insert into agents (id, org_id, public_key, name, status, site_url)
    values (${newId()}, ${orgId}, ${newPublicKey()}, ${input.name}, ${status}, ${input.site_url ?? null})
    returning ${db(COLUMNS)}`;
  return toAgent(row!);
}

export async function findAgent(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<Agent | null> {
  // Static text on the hot read path: postgres.js prepares it once per connection.
  const [row] = opts.forUpdate
    ? await db<AgentRow[]>`select ${db(COLUMNS)} from agents where id = ${id} and org_id = ${orgId} and deleted_at is null for update`
    : await db<AgentRow[]>`select id, org_id, public_key, name, status, voice, persona, site_url, created_at, updated_at
        from agents where id = ${id} and org_id = ${orgId} and deleted_at is null`;
  return row ? toAgent(row) : null;
}

export async function listAgents(db: Db, orgId: string, q: { status?: AgentStatus | undefined; limit: number; offset: number }):
  Promise<{ data: Agent[]; total: number }> {
  const statusFilter = q.status ? db`and status = ${q.status}` : db``;
  const [rows, [count]] = await Promise.all([
    db<AgentRow[]>`select ${db(COLUMNS)} from agents
      where org_id = ${orgId} and deleted_at is null ${statusFilter}
      order by created_at desc, id desc limit ${q.limit} offset ${q.offset}`,
    db<{ total: number }[]>`select count(*)::int as total from agents where org_id = ${orgId} and deleted_at is null ${statusFilter}`,
  ]);
  return { data: rows.map(toAgent), total: count?.total ?? 0 };
}

/** Applies the Basics fields present in `patch`; returns the agent before and after, or null when absent. */
export async function updateAgentBasics(db: Db, orgId: string, id: string, patch: AgentPatch): Promise<{ before: Agent; after: Agent } | null> {
  const before = await findAgent(db, orgId, id, { forUpdate: true });
  if (!before) return null;
  const fields: Record<string, unknown> = {};
  for (const key of ['name', 'persona', 'voice', 'status'] as const) if (patch[key] !== undefined) fields[key] = patch[key];
  if (Object.keys(fields).length === 0) return { before, after: before };
  const [row] = await db<AgentRow[]>`
    update agents set ${db(fields)}, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return { before, after: toAgent(row!) };
}

/** Hides an agent at once (every read answers 404); its purge workflow removes the rest. */
export async function markAgentDeleted(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`update agents set deleted_at = now()
    where id = ${id} and org_id = ${orgId} and deleted_at is null returning id`;
  return rows.length > 0;
}

/**
 * Clears a voice profile from every agent of the organization that uses it, live and in a
 * pending draft, when the profile is deleted (agents then speak with their base `voice`).
 */
export async function detachVoiceProfile(db: Db, orgId: string, profileId: string): Promise<number> {
  const rows = await db`
    update agents set
      config = case when config->>'voice_profile_id' = ${profileId} then config - 'voice_profile_id' else config end,
      draft = case when draft->'changes'->>'voice_profile_id' = ${profileId}
        then jsonb_set(draft, '{changes}', (draft->'changes') - 'voice_profile_id') else draft end,
      updated_at = now()
    where org_id = ${orgId} and (config->>'voice_profile_id' = ${profileId} or draft->'changes'->>'voice_profile_id' = ${profileId})
    returning id`;
  return rows.length;
}
