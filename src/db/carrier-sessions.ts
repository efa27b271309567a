import type { Db } from './index.ts';
import { newId } from '../ids.ts';

/** A call (by its CallSid) or an SMS thread (by `<from>|<to>`) and the conversation it became. */
export interface CarrierSession {
  id: string; orgId: string; agentId: string; phoneNumberId: string; conversationId: string | null;
  channel: 'voice' | 'sms'; sessionKey: string; caller: string; status: 'active' | 'transferred' | 'ended'; transferRuleId: string | null;
}

interface SessionRow {
  id: string; org_id: string; agent_id: string; phone_number_id: string; conversation_id: string | null; channel: 'voice' | 'sms';
  session_key: string; caller: string; status: CarrierSession['status']; transfer_rule_id: string | null;
}
const COLUMNS = ['id', 'org_id', 'agent_id', 'phone_number_id', 'conversation_id', 'channel', 'session_key', 'caller', 'status', 'transfer_rule_id'];
const toSession = (r: SessionRow): CarrierSession => ({
  id: r.id, orgId: r.org_id, agentId: r.agent_id, phoneNumberId: r.phone_number_id, conversationId: r.conversation_id, channel: r.channel,
  sessionKey: r.session_key, caller: r.caller, status: r.status, transferRuleId: r.transfer_rule_id,
});

export async function insertCarrierSession(db: Db, input: Omit<CarrierSession, 'id' | 'status' | 'transferRuleId'>): Promise<CarrierSession> {
  const [row] = await db<SessionRow[]>`insert into carrier_sessions (id, org_id, agent_id, phone_number_id, conversation_id, channel, session_key, caller)
    values (${newId()}, ${input.orgId}, ${input.agentId}, ${input.phoneNumberId}, ${input.conversationId}, ${input.channel}, ${input.sessionKey}, ${input.caller})
    returning ${db(COLUMNS)}`;
  return toSession(row!);
}

/** The call or thread still going under this key, if any. */
export async function findLiveSession(db: Db, channel: 'voice' | 'sms', sessionKey: string): Promise<CarrierSession | null> {
  const [row] = await db<SessionRow[]>`select ${db(COLUMNS)} from carrier_sessions
    where channel = ${channel} and session_key = ${sessionKey} and status <> 'ended'`;
  return row ? toSession(row) : null;
}

export async function findSessionById(db: Db, id: string): Promise<CarrierSession | null> {
  const [row] = await db<SessionRow[]>`select ${db(COLUMNS)} from carrier_sessions where id = ${id}`;
  return row ? toSession(row) : null;
}

export async function markSessionTransferred(db: Db, id: string, ruleId: string): Promise<void> {
  await db`update carrier_sessions set status = 'transferred', transfer_rule_id = ${ruleId}, updated_at = now() where id = ${id}`;
}

/** A transferred call back with its agent (the destination did not answer): true when it was transferred. */
export async function resumeTransferredSession(db: Db, id: string): Promise<boolean> {
  const rows = await db`update carrier_sessions set status = 'active', updated_at = now() where id = ${id} and status = 'transferred' returning id`;
  return rows.length > 0;
}

export async function endSession(db: Db, id: string): Promise<void> {
  await db`update carrier_sessions set status = 'ended', updated_at = now() where id = ${id}`;
}

/** Where a member's reply in an SMS conversation goes: from our number to the texter's. Null when the thread has no session. */
export async function findSmsThread(db: Db, conversationId: string): Promise<{ ourNumber: string; caller: string } | null> {
  const [row] = await db<{ our_number: string; caller: string }[]>`
    select p.phone_number as our_number, s.caller from carrier_sessions s join phone_numbers p on p.id = s.phone_number_id
    where s.conversation_id = ${conversationId} and s.channel = 'sms' order by s.created_at desc limit 1`;
  return row ? { ourNumber: row.our_number, caller: row.caller } : null;
}
