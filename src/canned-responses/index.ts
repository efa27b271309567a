import type { Principal } from '../auth/authenticator.ts';
import type { Db } from '../db/index.ts';
import { cannedContext, deleteCanned, findCannedByCode, findCannedRow, insertCanned, listCannedRows, updateCanned, type CannedRow } from '../db/canned-responses.ts';
import { findMember } from '../db/live-inbox.ts';
import { AppError, fieldError, notFound } from '../errors.ts';
import type { CannedResponse } from '../schemas/canned-responses.ts';
import { inScope } from '../assignments/index.ts';

/**
 * Canned responses (issue 45): replies a member inserts in /inbox by typing `/short_code`. Their text
 * may hold `{{variables}}`, filled from the conversation (`visitor.*`, `agent.*`), the member
 * (`member.*`) and any given; a variable without a value stays as written and is named in `missing`.
 */

const VARIABLE = /\{\{\s*([A-Za-z0-9_.]{1,64})\s*\}\}/g;

/** The variable names a text uses, once each, in order. */
export function variablesOf(text: string): string[] {
  return [...new Set([...text.matchAll(VARIABLE)].map((m) => m[1]!))];
}

/** Fills the text's variables from `values`; those without a value stay as written. */
export function fillVariables(text: string, values: Record<string, string | null | undefined>): { text: string; missing: string[] } {
  const missing = new Set<string>();
  const filled = text.replace(VARIABLE, (whole, name: string) => {
    const value = values[name];
    if (value === undefined || value === null || value === '') { missing.add(name); return whole; }
    return value;
  });
  return { text: filled, missing: [...missing] };
}

const toCanned = (r: CannedRow): CannedResponse => ({
  id: r.id, short_code: r.short_code, title: r.title, text: r.text, variables: variablesOf(r.text),
  created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
});

const taken = (code: string) => new AppError(409, 'name_taken', `a canned response with short code "${code}" already exists`);

export async function listCanned(db: Db, orgId: string, q: { limit: number; offset: number; q?: string }) {
  const page = await listCannedRows(db, orgId, q);
  return { data: page.data.map(toCanned), total: page.total };
}

export async function getCanned(db: Db, orgId: string, id: string): Promise<CannedResponse> {
  const row = await findCannedRow(db, orgId, id);
  if (!row) throw notFound('canned response');
  return toCanned(row);
}

export async function createCanned(db: Db, orgId: string, body: { short_code: string; title?: string; text: string }): Promise<CannedResponse> {
  const row = await insertCanned(db, orgId, { short_code: body.short_code, title: body.title ?? body.short_code, text: body.text });
  if (row === 'taken') throw taken(body.short_code);
  return toCanned(row);
}

export async function changeCanned(db: Db, orgId: string, id: string, patch: { short_code?: string; title?: string; text?: string }): Promise<CannedResponse> {
  const row = await updateCanned(db, orgId, id, patch);
  if (row === 'taken') throw taken(patch.short_code!);
  if (!row) throw notFound('canned response');
  return toCanned(row);
}

export async function removeCanned(db: Db, orgId: string, id: string): Promise<void> {
  if (!(await deleteCanned(db, orgId, id))) throw notFound('canned response');
}

/** Expands `/code` for a member, in a conversation or not. */
export async function expandCanned(db: Db, principal: Principal, input: { short_code: string; conversation_id?: string; variables?: Record<string, string> }):
  Promise<{ text: string; missing: string[] }> {
  const code = input.short_code.replace(/^\//, '');
  const row = await findCannedByCode(db, principal.orgId, code);
  if (!row) throw fieldError('short_code', 'unknown_short_code', `no canned response has the short code "${code}"`);
  const values: Record<string, string | null> = {};
  if (input.conversation_id) {
    const context = await cannedContext(db, principal.orgId, input.conversation_id);
    if (!context || !inScope(principal, context.agent_id)) throw fieldError('conversation_id', 'unknown_conversation', 'conversation_id is not a conversation of this organization');
    Object.assign(values, { 'agent.name': context.agent_name, 'visitor.name': context.contact_name, 'visitor.email': context.contact_email });
  }
  const member = principal.memberId ? await findMember(db, principal.memberId) : null;
  if (member) Object.assign(values, { 'member.email': member.email, 'member.name': member.name });
  return fillVariables(row.text, { ...values, ...input.variables });
}
