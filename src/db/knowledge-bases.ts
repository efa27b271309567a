import type { Db } from './index.ts';
import { newId } from '../ids.ts';
import type { KnowledgeBase } from '../schemas/sites.ts';

interface KbRow { id: string; name: string; agent_ids: string[] | null; created_at: Date; updated_at: Date }

const toKb = (row: KbRow): KnowledgeBase => ({
  id: row.id, name: row.name, agent_ids: row.agent_ids ?? [],
  created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
});

/** Knowledge bases with the live agents that use them. */
const select = (db: Db) => db`select kb.id, kb.name, kb.created_at, kb.updated_at,
  (select array_agg(k.agent_id order by k.created_at, k.agent_id) from agent_knowledge_bases k join agents a on a.id = k.agent_id
   where k.kb_id = kb.id and a.deleted_at is null) as agent_ids
  from knowledge_bases kb`;

export async function insertKnowledgeBase(db: Db, orgId: string, name: string): Promise<KnowledgeBase> {
  const id = newId();
  await db`insert into knowledge_bases (id, org_id, name) values (${id}, ${orgId}, ${name})`;
  return (await findKnowledgeBase(db, orgId, id))!;
}

export async function findKnowledgeBase(db: Db, orgId: string, id: string): Promise<KnowledgeBase | null> {
  const [row] = await db<KbRow[]>`${select(db)} where kb.id = ${id} and kb.org_id = ${orgId}`;
  return row ? toKb(row) : null;
}

export async function listKnowledgeBases(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: KnowledgeBase[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    db<KbRow[]>`${select(db)} where kb.org_id = ${orgId} order by kb.created_at desc, kb.id desc limit ${q.limit} offset ${q.offset}`,
    db<{ total: number }[]>`select count(*)::int as total from knowledge_bases where org_id = ${orgId}`,
  ]);
  return { data: rows.map(toKb), total: count?.total ?? 0 };
}

export async function renameKnowledgeBase(db: Db, orgId: string, id: string, name: string | undefined): Promise<KnowledgeBase | null> {
  if (name !== undefined) await db`update knowledge_bases set name = ${name}, updated_at = now() where id = ${id} and org_id = ${orgId}`;
  return findKnowledgeBase(db, orgId, id);
}

/** Deletes knowledge bases (their sites and pages go with them); answers the ids of their sites, whose Schedules must go too. */
export async function deleteKnowledgeBases(db: Db, orgId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const sites = await db<{ id: string }[]>`select id from sites where kb_id in ${db(ids)} and org_id = ${orgId}`;
  await db`delete from knowledge_bases where id in ${db(ids)} and org_id = ${orgId}`;
  return sites.map((s) => s.id);
}

export async function attachKnowledgeBase(db: Db, agentId: string, kbId: string): Promise<void> {
  await db`insert into agent_knowledge_bases (agent_id, kb_id) values (${agentId}, ${kbId}) on conflict do nothing`;
}

export async function detachKnowledgeBase(db: Db, agentId: string, kbId: string): Promise<boolean> {
  return (await db`delete from agent_knowledge_bases where agent_id = ${agentId} and kb_id = ${kbId}`).count > 0;
}

/** The knowledge bases that no live agent but this one uses (what `delete_kbs=true` deletes); shared ones never. */
export async function knowledgeBasesOnlyUsedBy(db: Db, agentId: string): Promise<string[]> {
  const rows = await db<{ kb_id: string }[]>`
    select k.kb_id from agent_knowledge_bases k where k.agent_id = ${agentId}
    and not exists (select 1 from agent_knowledge_bases o join agents a on a.id = o.agent_id
      where o.kb_id = k.kb_id and o.agent_id <> ${agentId} and a.deleted_at is null)`;
  return rows.map((r) => r.kb_id);
}
