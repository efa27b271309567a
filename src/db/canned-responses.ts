import { listPage, type Db } from './index.ts';
import { newId } from '../ids.ts';

/** Canned responses (issue 45): an organization's reusable replies, found by short code. */

export interface CannedRow { id: string; short_code: string; title: string; text: string; created_at: Date; updated_at: Date }

const columns = (db: Db) => db`id, short_code, title, text, created_at, updated_at`;

export async function listCannedRows(db: Db, orgId: string, q: { limit: number; offset: number; q?: string }): Promise<{ data: CannedRow[]; total: number }> {
  const prefix = q.q ? q.q.replace(/^\//, '').toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`) : null;
  return listPage<CannedRow, CannedRow>(db, {
    limit: q.limit, offset: q.offset, columns: columns(db),
    from: db`from canned_responses where org_id = ${orgId} ${prefix !== null ? db`and lower(short_code) like ${prefix + '%'}` : db``}`,
    order: db`created_at desc, id desc`,
  }, (r) => r);
}

export async function findCannedRow(db: Db, orgId: string, id: string): Promise<CannedRow | null> {
  const [row] = await db<CannedRow[]>`select ${columns(db)} from canned_responses where org_id = ${orgId} and id = ${id}`;
  return row ?? null;
}

export async function findCannedByCode(db: Db, orgId: string, code: string): Promise<CannedRow | null> {
  const [row] = await db<CannedRow[]>`select ${columns(db)} from canned_responses where org_id = ${orgId} and lower(short_code) = lower(${code})`;
  return row ?? null;
}

/** Inserts one; `taken` when the organization has that short code. */
export async function insertCanned(db: Db, orgId: string, c: { short_code: string; title: string; text: string }): Promise<CannedRow | 'taken'> {
  const [row] = await db<CannedRow[]>`insert into canned_responses (id, org_id, short_code, title, text)
    values (${newId()}, ${orgId}, ${c.short_code}, ${c.title}, ${c.text}) on conflict (org_id, lower(short_code)) do nothing returning ${columns(db)}`;
  return row ?? 'taken';
}

export async function updateCanned(db: Db, orgId: string, id: string, c: { short_code?: string; title?: string; text?: string }): Promise<CannedRow | null | 'taken'> {
  if (c.short_code !== undefined) {
    const [clash] = await db`select 1 from canned_responses where org_id = ${orgId} and lower(short_code) = lower(${c.short_code}) and id <> ${id}`;
    if (clash) return 'taken';
  }
  const [row] = await db<CannedRow[]>`update canned_responses set short_code = coalesce(${c.short_code ?? null}, short_code),
    title = coalesce(${c.title ?? null}, title), text = coalesce(${c.text ?? null}, text), updated_at = now()
    where org_id = ${orgId} and id = ${id} returning ${columns(db)}`;
  return row ?? null;
}

export async function deleteCanned(db: Db, orgId: string, id: string): Promise<boolean> {
  return (await db`delete from canned_responses where org_id = ${orgId} and id = ${id} returning id`).length > 0;
}

/** What a canned response's variables may come from: the conversation's contact and agent. */
export async function cannedContext(db: Db, orgId: string, conversationId: string): Promise<{ agent_id: string; agent_name: string; contact_name: string | null; contact_email: string | null } | null> {
  const [row] = await db<{ agent_id: string; agent_name: string; contact_name: string | null; contact_email: string | null }[]>`
    select c.agent_id, a.name as agent_name, nullif(trim(concat_ws(' ', ct.first_name, ct.last_name)), '') as contact_name, ct.email_lower as contact_email
    from conversations c join agents a on a.id = c.agent_id and a.deleted_at is null left join contacts ct on ct.id = c.contact_id
    where c.id = ${conversationId} and c.org_id = ${orgId}`;
  return row ?? null;
}
