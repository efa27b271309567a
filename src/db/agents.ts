import { listPage, type Db, type Fragment } from './index.ts';
import { calleeContactColumn, calleeContactOf, type CalleeLookup } from './contacts.ts';
import { newId, newPublicKey, pooledRandomBytes } from '../ids.ts';
import { isoTime, redactionStillAt, type OutboxEvent } from './events.ts';
import { fanOutWrittenEvent, isEndpointGone } from './webhooks.ts';
import { rememberRedaction, type KnownRedaction } from './redaction-cache.ts';
import type { RedactionSettings } from '../schemas/governance.ts';
import type { Agent, AgentPatch, AgentStatus } from '../schemas/agents.ts';
import type { Contact } from '../schemas/contacts.ts';
// The widget view of an agent (agents and widgets are one entity): made from the one list of widget fields.
export { toWidget } from '../schemas/widgets.ts';
import {
  agentShapeBuilder, applyPatch, changesSomething, combineChanges, pruneChanges, type BasicField, type ConfigObject,
} from '../domain/agent-config.ts';

interface AgentRow {
  id: string; org_id: string; public_key: string; name: string; status: AgentStatus;
  voice: string | null; persona: string | null; site_url: string | null;
  config: ConfigObject; draft: { changes: AgentPatch } | null; draft_updated_at: Date | null;
  created_at: Date; updated_at: Date;
}

/** Every column of AgentRow; findRow's four selects write the same list out (keep them the same). */
const COLUMNS = ['id', 'org_id', 'public_key', 'name', 'status', 'voice', 'persona', 'site_url', 'config', 'draft', 'draft_updated_at', 'created_at', 'updated_at'];

/** The columns an agent's API shape is made of (toAgent): what a read that only shows the agent selects. */
type ShownRow = Pick<AgentRow, 'id' | 'public_key' | 'name' | 'status' | 'voice' | 'persona' | 'site_url' | 'config' | 'draft' | 'created_at' | 'updated_at'>;

const basicsOf = (row: ShownRow): Record<BasicField, unknown> => ({ name: row.name, persona: row.persona, voice: row.voice, status: row.status });

/** The agent's API object in one literal (agentShapeBuilder, src/domain/agent-config.ts). */
const agentShape = agentShapeBuilder();

/** The API shape of an agent row: every writable field under its PATCH name, in the shape's order (every agent shown runs it). */
export function toAgent(row: ShownRow): Agent {
  const hasPendingDraft = row.draft ? changesSomething(basicsOf(row), row.config, row.draft.changes) : false;
  return agentShape(row, row.config, hasPendingDraft) as unknown as Agent;
}

export interface NewAgent {
  name: string;
  site_url?: string | null | undefined;
  status?: AgentStatus;
  persona?: string | null;
  voice?: string | null;
  config?: ConfigObject;
  /** Which endpoint family made it: its first finished crawl emits widget.ready (widgets) or widget.crawl_completed. */
  createdVia?: 'agents' | 'widgets';
}

/** Inserts an agent: `draft` when it has a site to crawl, else `active` (unless `status` says otherwise). */
export async function insertAgent(db: Db, orgId: string, input: NewAgent): Promise<Agent> {
  const status: AgentStatus = input.status ?? (input.site_url ? 'draft' : 'active');
  const [row] = await db<AgentRow[]>`
    insert into agents (id, org_id, public_key, name, status, site_url, persona, voice, config, created_via)
    values (${newId()}, ${orgId}, ${newPublicKey()}, ${input.name}, ${status}, ${input.site_url ?? null},
      ${input.persona ?? null}, ${input.voice ?? null}, ${db.json((input.config ?? {}) as never)}, ${input.createdVia ?? 'agents'})
    returning ${db(COLUMNS)}`;
  return toAgent(row!);
}

/**
 * The four reads of a live agent row, each one constant text (so each is one prepared statement):
 * by id or widget id, with or without a row lock. The columns are COLUMNS written out: `db(COLUMNS)`
 * escaped the thirteen names again on every read (about 2 % of a GET's CPU; issue 48).
 */
async function findRow(db: Db, orgId: string, where: { id: string } | { publicKey: string }, forUpdate: boolean): Promise<AgentRow | null> {
  let rows: AgentRow[];
  if ('id' in where) {
    if (forUpdate) {
      // A change of the agent usually emits an event, which applies its redaction settings (src/events/emit.ts): they are
      // read here with the row and remembered, rather than by a statement of their own (issue 48). The event's insert
      // still checks they are the agent's version.
      const locked = await db<(AgentRow & { redaction_settings: RedactionSettings | null; redaction_version: number | null })[]>`
        select id, org_id, public_key, name, status, voice, persona, site_url, config, draft, draft_updated_at, created_at, updated_at,
          (select redaction from agent_governance where agent_id = agents.id) as redaction_settings,
          (select version from agent_governance where agent_id = agents.id) as redaction_version
        from agents where id = ${where.id} and org_id = ${orgId} and deleted_at is null for update`;
      const [found] = locked;
      if (found) {
        const { redaction_settings: settings, redaction_version: version, ...row } = found;
        rememberRedaction(row.id, { settings, version: version ?? 0 });
        return row;
      }
      return null;
    }
    rows = await db<AgentRow[]>`select id, org_id, public_key, name, status, voice, persona, site_url, config, draft, draft_updated_at, created_at, updated_at
          from agents where id = ${where.id} and org_id = ${orgId} and deleted_at is null`;
  } else {
    rows = forUpdate
      ? await db<AgentRow[]>`select id, org_id, public_key, name, status, voice, persona, site_url, config, draft, draft_updated_at, created_at, updated_at
          from agents where public_key = ${where.publicKey} and org_id = ${orgId} and deleted_at is null for update`
      : await db<AgentRow[]>`select id, org_id, public_key, name, status, voice, persona, site_url, config, draft, draft_updated_at, created_at, updated_at
          from agents where public_key = ${where.publicKey} and org_id = ${orgId} and deleted_at is null`;
  }
  return rows[0] ?? null;
}

export async function findAgent(db: Db, orgId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<Agent | null> {
  if (!opts.forUpdate) {
    // Only the columns the agent's shape shows (not org_id, asked for, nor draft_updated_at): a GET reads what the
    // bare route of bench:api reads, one constant text (issue 48, perf10).
    const [shown] = await db<ShownRow[]>`select id, public_key, name, status, voice, persona, site_url, config, draft, created_at, updated_at
      from agents where id = ${id} and org_id = ${orgId} and deleted_at is null`;
    return shown ? toAgent(shown) : null;
  }
  const row = await findRow(db, orgId, { id }, true);
  return row ? toAgent(row) : null;
}

/**
 * The agent, and whether it has an enabled transfer rule (what runtimeAgent tells the runtime), in one
 * read: for the steps that read an agent only to run it.
 */
export interface AgentToRun {
  agent: Agent; transfers: boolean;
  /** Its redaction settings (issue 47) as read with it, remembered as loadAgentRedaction remembers them. */
  redaction: KnownRedaction;
}
export async function findAgentToRun(db: Db, orgId: string, id: string): Promise<AgentToRun | null> {
  const [row] = await agentToRunRows(db, orgId, id, db``);
  return row ? agentToRun(row) : null;
}

/**
 * findAgentToRun, and in the same statement the contact a placed call reaches (findContact's, or matchContact's for its
 * number): what an answered campaign call's opening reads before its greeting (issue 48: one statement, was two).
 */
export async function findAgentToRunAndCallee(db: Db, orgId: string, id: string, callee: CalleeLookup):
  Promise<(AgentToRun & { callee: Contact | null }) | null> {
  const [row] = await agentToRunRows<{ callee: Parameters<typeof calleeContactOf>[0] }>(db, orgId, id, db`, ${calleeContactColumn(db, orgId, callee)} as callee`);
  return row ? { ...agentToRun(row), callee: calleeContactOf(row.callee) } : null;
}

type AgentToRunRow = AgentRow & { transfers: boolean; redaction_settings: RedactionSettings | null; redaction_version: number | null };

function agentToRunRows<Extra = object>(db: Db, orgId: string, id: string, extra: Fragment) {
  return db<(AgentToRunRow & Extra)[]>`
    select ${db(COLUMNS)},
      exists (select 1 from transfer_rules t where t.agent_id = agents.id and t.enabled) as transfers,
      g.redaction_settings, g.redaction_version ${extra}
    from agents left join lateral (
      select redaction as redaction_settings, version as redaction_version from agent_governance where agent_id = agents.id) g on true
    where id = ${id} and org_id = ${orgId} and deleted_at is null`;
}

function agentToRun(row: AgentToRunRow): AgentToRun {
  const redaction = { settings: row.redaction_settings, version: row.redaction_version ?? 0 };
  rememberRedaction(row.id, redaction);
  return { agent: toAgent(row), transfers: row.transfers, redaction };
}

/** The agent whose widget id (public key) is `publicKey`, in the organization. */
export async function findAgentByPublicKey(db: Db, orgId: string, publicKey: string): Promise<Agent | null> {
  const row = await findRow(db, orgId, { publicKey }, false);
  return row ? toAgent(row) : null;
}

/** The stored configuration of an agent (what clone, promote and export copy). */
export async function findAgentConfig(db: Db, orgId: string, id: string): Promise<{ agent: Agent; config: ConfigObject } | null> {
  const row = await findRow(db, orgId, { id }, false);
  return row ? { agent: toAgent(row), config: row.config } : null;
}

export async function listAgents(db: Db, orgId: string, q: { status?: AgentStatus | undefined; limit: number; offset: number }):
  Promise<{ data: Agent[]; total: number }> {
  const statusFilter = q.status ? db`and status = ${q.status}` : db``;
  return listPage(db, {
    ...q, columns: db(COLUMNS), from: db`from agents where org_id = ${orgId} and deleted_at is null ${statusFilter}`, order: db`created_at desc, id desc`,
  }, toAgent);
}

/** A page of agents newest first after the (created_at, id) position of a cursor. */
export async function listAgentsAfter(db: Db, orgId: string, q: { after: { createdAt: string; id: string } | null; limit: number }): Promise<Agent[]> {
  const after = q.after ? db`and (created_at, id) < (${q.after.createdAt}::timestamptz, ${q.after.id}::uuid)` : db``;
  const rows = await db<AgentRow[]>`select ${db(COLUMNS)} from agents
    where org_id = ${orgId} and deleted_at is null ${after}
    order by created_at desc, id desc limit ${q.limit}`;
  return rows.map(toAgent);
}

async function writeRow(db: Db, row: AgentRow, basics: Record<BasicField, unknown>, config: ConfigObject,
  draft: { changes: AgentPatch } | null, draftUpdatedAt: Date | null): Promise<AgentRow> {
  const [next] = await db<AgentRow[]>`
    update agents set name = ${basics.name as string}, persona = ${basics.persona as string | null}, voice = ${basics.voice as string | null},
      status = ${basics.status as string}, config = ${db.json(config as never)},
      draft = ${draft ? db.json(draft as never) : null}, draft_updated_at = ${draftUpdatedAt}, updated_at = now()
    where id = ${row.id} returning ${db(COLUMNS)}`;
  return next!;
}

/** What a normalized PATCH makes of a row: its basics and configuration, and the pending draft with the same keys pruned. */
function planPatch(row: AgentRow, patch: AgentPatch): { basics: Record<BasicField, unknown>; config: ConfigObject; draft: { changes: AgentPatch } | null; draftUpdatedAt: Date | null } {
  const next = applyPatch(basicsOf(row), row.config, patch);
  const pruned = row.draft ? pruneChanges(row.draft.changes, patch) : null;
  const keep = pruned && Object.keys(pruned).length > 0;
  return { ...next, draft: keep ? { changes: pruned } : null, draftUpdatedAt: keep ? row.draft_updated_at : null };
}

/**
 * Applies a normalized PATCH to the live configuration and prunes the same keys from a pending
 * draft, under a row lock (so a concurrent publish sees all or none of it). Answers the agent
 * before and after, or null when there is no such agent.
 */
export async function updateAgent(db: Db, orgId: string, id: string, patch: AgentPatch): Promise<{ before: Agent; after: Agent } | null> {
  const row = await findRow(db, orgId, { id }, true);
  if (!row) return null;
  const before = toAgent(row);
  if (Object.keys(patch).length === 0) return { before, after: before };
  const next = planPatch(row, patch);
  const written = await writeRow(db, row, next.basics, next.config, next.draft, next.draftUpdatedAt);
  return { before, after: toAgent(written) };
}

/**
 * A live agent as read for a change in one statement (issue 48): the row, the agent it shows, the version of the row
 * (`xmin`, the transaction that wrote it: any later write of the row makes a new version) and its redaction settings
 * (remembered, as the locking read remembers them).
 */
export interface AgentSnapshot { before: Agent; row: AgentRow; rowVersion: string; redaction: KnownRedaction }

/** Reads a live agent for writeAgentChange, without a lock and outside a transaction; null when there is none. */
export async function readAgentForChange(db: Db, orgId: string, id: string): Promise<AgentSnapshot | null> {
  const [found] = await db<(AgentRow & { row_version: string; redaction_settings: RedactionSettings | null; redaction_version: number | null })[]>`
    select id, org_id, public_key, name, status, voice, persona, site_url, config, draft, draft_updated_at, created_at, updated_at, xmin::text as row_version,
      (select redaction from agent_governance where agent_id = agents.id) as redaction_settings,
      (select version from agent_governance where agent_id = agents.id) as redaction_version
    from agents where id = ${id} and org_id = ${orgId} and deleted_at is null`;
  if (!found) return null;
  const { row_version: rowVersion, redaction_settings: settings, redaction_version: version, ...row } = found;
  const redaction = { settings, version: version ?? 0 };
  rememberRedaction(row.id, redaction);
  return { before: toAgent(row), row, rowVersion, redaction };
}

/**
 * A change of a snapshot planned in memory: the row as the update will write it, and the agent it will show, with
 * `updated_at` (the statement's clock, unknown until it runs) as `stampToken`, which writeAgentChange replaces in the
 * event's JSON text by the written value.
 */
export interface AgentChange { snapshot: AgentSnapshot; next: ReturnType<typeof planPatch>; after: Agent; stampToken: string }

export function planAgentChange(snapshot: AgentSnapshot, patch: AgentPatch): AgentChange {
  const next = planPatch(snapshot.row, patch);
  // As the update's RETURNING would give them back: jsonb orders an object's keys (see asJsonb).
  const row: AgentRow = {
    ...snapshot.row, ...(next.basics as Pick<AgentRow, BasicField>), config: asJsonb(next.config) as ConfigObject,
    draft: next.draft ? asJsonb(next.draft) as { changes: AgentPatch } : null, draft_updated_at: next.draftUpdatedAt,
  };
  const stampToken = `updated_at:${pooledRandomBytes(16).toString('hex')}`;
  const after = toAgent(row);
  after.updated_at = stampToken;
  return { snapshot, next, after, stampToken };
}

/**
 * Writes a planned change, and the event it emits, in one statement (atomic by itself: one round trip and one commit
 * instead of begin, a locking read, the update, the event's insert and commit). The update holds only while the row is
 * still the version the snapshot read (`xmin`), and, with an event, while the agent's redaction settings are still the
 * version its payload was masked with; the event is inserted from the updated row, so both are written or neither.
 * Answers the agent as written, or null when nothing was written (the row changed or went, or the settings did): the
 * caller then makes the change under a row lock, as updateAgent does.
 */
export async function writeAgentChange(db: Db, change: AgentChange, event: OutboxEvent | null): Promise<Agent | null> {
  const { snapshot: { row, rowVersion }, next } = change;
  const { basics } = next;
  // The event is fanned out by this statement too (issue 48, round six): it is written dispatched, with its deliveries.
  const written = event ? db`, event as (
      insert into events (id, org_id, type, agent_id, data, created_at, dispatched_at)
      select ${event.id}::text, ${event.orgId}::uuid, ${event.type}::text, ${event.agentId}::uuid,
        replace(${event.json}::text, ${JSON.stringify(change.stampToken)}::text,
          '"' || ${isoTime(db, db`u.updated_at`)} || '"')::json, clock_timestamp(), now()
      from updated u
      returning id, org_id, type)
    ${fanOutWrittenEvent(db)}` : db``;
  const guard = event
    ? db`and ${redactionStillAt(db, row.id, event.redactionVersion)}`
    : db``;
  const [updated] = await db<AgentRow[]>`
    with updated as (
      update agents set name = ${basics.name as string}, persona = ${basics.persona as string | null}, voice = ${basics.voice as string | null},
        status = ${basics.status as string}, config = ${db.json(next.config as never)},
        draft = ${next.draft ? db.json(next.draft as never) : null}, draft_updated_at = ${next.draftUpdatedAt}, updated_at = now()
      where id = ${row.id} and org_id = ${row.org_id} and deleted_at is null and xmin = ${rowVersion}::xid ${guard}
      returning id, org_id, public_key, name, status, voice, persona, site_url, config, draft, draft_updated_at, created_at, updated_at)
    ${written}
    select * ${event ? db`, (select count(*) from woke) as woke` : db``} from updated`.catch((err: unknown) => {
    // An endpoint deleted while this statement fanned out to it: nothing was written; the locked path writes the
    // event for the dispatcher to fan out.
    if (isEndpointGone(err)) return [];
    throw err;
  });
  return updated ? toAgent(updated) : null;
}

/**
 * A value as PostgreSQL's jsonb gives it back: an object's keys ordered shorter first, then by their UTF-8 bytes (then
 * JSON.parse puts integer-like keys first, as building the object here does); undefined members dropped.
 */
function asJsonb(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : asJsonb(v)));
  if (value === null || typeof value !== 'object') return typeof value === 'number' && !Number.isFinite(value) ? null : value;
  // fromEntries: a `__proto__` key stays a member, as JSON.parse makes it.
  return Object.fromEntries(Object.keys(value).sort(byJsonbKeyOrder)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => [key, asJsonb((value as Record<string, unknown>)[key])]));
}

function byJsonbKeyOrder(a: string, b: string): number {
  const bytesA = Buffer.byteLength(a);
  const bytesB = Buffer.byteLength(b);
  if (bytesA !== bytesB) return bytesA - bytesB;
  // ASCII: UTF-16 order is byte order.
  if (bytesA === a.length && bytesB === b.length) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

export interface Draft { changes: AgentPatch; updated_at: string }

const toDraft = (row: AgentRow): Draft | null => (row.draft ? { changes: row.draft.changes, updated_at: row.draft_updated_at!.toISOString() } : null);

/** Stages changes on top of the pending draft. Null when there is no such agent. */
export async function stageDraft(db: Db, orgId: string, id: string, patch: AgentPatch): Promise<Draft | null> {
  const row = await findRow(db, orgId, { id }, true);
  if (!row) return null;
  const changes = combineChanges(row.draft?.changes ?? {}, patch);
  const [next] = await db<AgentRow[]>`update agents set draft = ${db.json({ changes } as never)}, draft_updated_at = now()
    where id = ${id} returning ${db(COLUMNS)}`;
  return toDraft(next!);
}

/** The pending draft; `agent: null` when there is no such agent, `draft: null` when it has none. */
export async function findDraft(db: Db, orgId: string, id: string): Promise<{ agent: Agent; draft: Draft | null } | null> {
  const row = await findRow(db, orgId, { id }, false);
  return row ? { agent: toAgent(row), draft: toDraft(row) } : null;
}

/**
 * Publishes the pending draft atomically: its changes become live and the draft is gone.
 * Answers null when there is no agent, `{draft: null}` when there is nothing to publish.
 */
export async function publishDraft(db: Db, orgId: string, id: string):
  Promise<{ before: Agent; after: Agent | null; changes: AgentPatch | null } | null> {
  const row = await findRow(db, orgId, { id }, true);
  if (!row) return null;
  const before = toAgent(row);
  if (!row.draft) return { before, after: null, changes: null };
  const next = applyPatch(basicsOf(row), row.config, row.draft.changes);
  const written = await writeRow(db, row, next.basics, next.config, null, null);
  return { before, after: toAgent(written), changes: row.draft.changes };
}

/** Discards the pending draft; false when there was none (or no agent). */
export async function discardDraft(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`update agents set draft = null, draft_updated_at = null
    where id = ${id} and org_id = ${orgId} and deleted_at is null and draft is not null returning id`;
  return rows.length > 0;
}

/**
 * Replaces an agent's configuration with another's (promote): basics persona and voice and every
 * configuration field but `domains`, which belong to where the target is embedded.
 */
export async function replaceConfiguration(db: Db, orgId: string, id: string, source: { persona: string | null; voice: string | null; config: ConfigObject }): Promise<Agent | null> {
  const row = await findRow(db, orgId, { id }, true);
  if (!row) return null;
  const config: ConfigObject = { ...source.config };
  delete config.domains;
  if (row.config.domains !== undefined) config.domains = row.config.domains;
  const written = await writeRow(db, row, { ...basicsOf(row), persona: source.persona, voice: source.voice }, config, row.draft, row.draft_updated_at);
  return toAgent(written);
}

/** Hides an agent at once (every read answers 404); its purge workflow removes the rest. */
export async function markAgentDeleted(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`update agents set deleted_at = now()
    where id = ${id} and org_id = ${orgId} and deleted_at is null returning id`;
  return rows.length > 0;
}

/** Whether `id` names a live agent of the organization (for ids named in request bodies). */
export async function agentExists(db: Db, orgId: string, id: string, opts: { share?: boolean } = {}): Promise<boolean> {
  // `share`: an agent's delete committing meanwhile is waited for, and then reads as gone.
  const lock = opts.share ? db`for share` : db``;
  const rows = await db`select 1 from agents where id = ${id} and org_id = ${orgId} and deleted_at is null ${lock}`;
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

/** Records the agent's website URL (the site row holds its crawl state). */
export async function setAgentSiteUrl(db: Db, id: string, url: string | null): Promise<void> {
  await db`update agents set site_url = ${url}, updated_at = now() where id = ${id}`;
}

/** The live agent whose widget id is `publicKey`, in any organization (the public widget endpoints). */
export async function findPublicAgent(db: Db, publicKey: string): Promise<{ agent: Agent; orgId: string } | null> {
  const [row] = await db<AgentRow[]>`select ${db(COLUMNS)} from agents where public_key = ${publicKey} and deleted_at is null`;
  return row ? { agent: toAgent(row), orgId: row.org_id } : null;
}

/** An agent's name, deleted or not (the summary of its purge); null when the row is gone. */
export async function agentName(db: Db, id: string): Promise<string | null> {
  const [row] = await db<{ name: string }[]>`select name from agents where id = ${id}`;
  return row?.name ?? null;
}

/** Removes an agent row once nothing depends on it; only an agent marked deleted goes. */
export async function deleteAgentRow(db: Db, id: string): Promise<boolean> {
  const rows = await db`delete from agents where id = ${id} and deleted_at is not null returning id`;
  return rows.length > 0;
}

/**
 * A draft agent whose site is now indexed becomes active: answers its created_via (whose flow
 * names the event), or null when it is not a live draft.
 */
export async function activateDraftAgent(tx: Db, agentId: string): Promise<'agents' | 'widgets' | null> {
  const [agent] = await tx<{ status: string; created_via: 'agents' | 'widgets' }[]>`
    select status, created_via from agents where id = ${agentId} and deleted_at is null for update`;
  if (!agent || agent.status !== 'draft') return null;
  await tx`update agents set status = 'active', updated_at = now() where id = ${agentId}`;
  return agent.created_via;
}
