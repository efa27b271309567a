import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { Consent, ConsentCreate, RedactionSettings, RedactionTarget } from '../schemas/governance.ts';
import type { RedactionPolicy } from '../domain/redaction.ts';
import { policyAt, rememberRedaction, type KnownRedaction } from './redaction-cache.ts';

/** Retention policies, agents' overrides and redaction settings, and consent records (migration 049). */

export type RetentionSettings = Record<string, number | null>;

export async function findRetentionPolicy(db: Db, orgId: string): Promise<{ settings: RetentionSettings; updated_at: Date } | null> {
  const [row] = await db<{ settings: RetentionSettings; updated_at: Date }[]>`select settings, updated_at from retention_policies where org_id = ${orgId}`;
  return row ?? null;
}

export async function upsertRetentionPolicy(db: Db, orgId: string, settings: RetentionSettings): Promise<Date> {
  const [row] = await db<{ updated_at: Date }[]>`insert into retention_policies (org_id, settings) values (${orgId}, ${db.json(settings)})
    on conflict (org_id) do update set settings = excluded.settings, updated_at = now() returning updated_at`;
  return row!.updated_at;
}

/** Every agent of the organization (not deleted) with retention overrides: its id and overrides. */
export async function agentRetentionOverrides(db: Db, orgId: string): Promise<{ agentId: string; retention: RetentionSettings }[]> {
  const rows = await db<{ agent_id: string; retention: RetentionSettings }[]>`select g.agent_id, g.retention from agent_governance g
    join agents a on a.id = g.agent_id and a.deleted_at is null where g.org_id = ${orgId} and g.retention <> '{}'::jsonb order by g.agent_id`;
  return rows.map((r) => ({ agentId: r.agent_id, retention: r.retention }));
}

export async function findAgentGovernance(db: Db, agentId: string): Promise<{ retention: RetentionSettings; redaction: RedactionSettings | null } | null> {
  const [row] = await db<{ retention: RetentionSettings; redaction: RedactionSettings | null }[]>`select retention, redaction from agent_governance where agent_id = ${agentId}`;
  return row ?? null;
}

export async function upsertAgentRetention(db: Db, orgId: string, agentId: string, retention: RetentionSettings): Promise<void> {
  await db`insert into agent_governance (agent_id, org_id, retention) values (${agentId}, ${orgId}, ${db.json(retention)})
    on conflict (agent_id) do update set retention = excluded.retention, updated_at = now(), version = agent_governance.version + 1`;
}

/** Replaces an agent's redaction settings; the version goes up, so every replica's cached copy stops applying (src/db/redaction-cache.ts). */
export async function upsertAgentRedaction(db: Db, orgId: string, agentId: string, redaction: RedactionSettings): Promise<void> {
  const [row] = await db<{ version: number }[]>`insert into agent_governance (agent_id, org_id, redaction) values (${agentId}, ${orgId}, ${db.json(redaction as never)})
    on conflict (agent_id) do update set redaction = excluded.redaction, updated_at = now(), version = agent_governance.version + 1
    returning version`;
  rememberRedaction(agentId, { settings: redaction, version: row!.version });
}

/** An agent's redaction settings by agent id alone (the paths that redact know the agent, not always the organization). */
export async function findAgentRedaction(db: Db, agentId: string): Promise<RedactionSettings | null> {
  return (await loadAgentRedaction(db, agentId)).settings;
}

/** Reads an agent's redaction settings with their version, and remembers them for the writes that apply them. */
export async function loadAgentRedaction(db: Db, agentId: string): Promise<KnownRedaction> {
  const [row] = await db<{ redaction: RedactionSettings | null; version: number }[]>`select redaction, version from agent_governance where agent_id = ${agentId}`;
  const known = { settings: row?.redaction ?? null, version: row?.version ?? 0 };
  rememberRedaction(agentId, known);
  return known;
}

/** The policy an agent applies at `target`, or null when it hides nothing there. */
export async function agentRedactionPolicy(db: Db, agentId: string | null | undefined, target: RedactionTarget): Promise<RedactionPolicy | null> {
  if (!agentId) return null;
  return policyAt((await loadAgentRedaction(db, agentId)).settings, target);
}

// ---- consent

interface ConsentRow { id: string; contact_id: string; kind: Consent['kind']; granted: boolean; source: string; recorded_at: Date }
const toConsent = (r: ConsentRow): Consent => ({ id: r.id, contact_id: r.contact_id, kind: r.kind, granted: r.granted, source: r.source, recorded_at: r.recorded_at.toISOString() });

export async function insertConsent(db: Db, orgId: string, contactId: string, body: ConsentCreate): Promise<Consent> {
  const [row] = await db<ConsentRow[]>`insert into contact_consents (id, org_id, contact_id, kind, granted, source)
    values (${newId()}, ${orgId}, ${contactId}, ${body.kind}, ${body.granted}, ${body.source})
    returning id, contact_id, kind, granted, source, recorded_at`;
  return toConsent(row!);
}

/** A contact's consent records, newest first. */
export async function listConsents(db: Db, orgId: string, contactId: string): Promise<Consent[]> {
  const rows = await db<ConsentRow[]>`select id, contact_id, kind, granted, source, recorded_at from contact_consents
    where org_id = ${orgId} and contact_id = ${contactId} order by recorded_at desc, id desc`;
  return rows.map(toConsent);
}

/** The contacts (of `contactIds`) and numbers (of `numbers`) whose latest marketing consent is a grant. */
export async function marketingConsented(db: Db, orgId: string, contactIds: string[], numbers: string[]): Promise<{ contactIds: Set<string>; numbers: Set<string> }> {
  const rows = await db<{ id: string; phone_e164: string | null }[]>`select c.id, c.phone_e164 from contacts c
    where c.org_id = ${orgId} and (c.id = any(${contactIds}::uuid[]) or c.phone_e164 = any(${numbers}::text[]))
      and (select k.granted from contact_consents k where k.contact_id = c.id and k.kind = 'marketing' order by k.recorded_at desc, k.id desc limit 1)`;
  return { contactIds: new Set(rows.map((r) => r.id)), numbers: new Set(rows.flatMap((r) => (r.phone_e164 ? [r.phone_e164] : []))) };
}
