import type postgres from 'postgres';
import { listPage, type Db, type Sql } from './index.ts';
import { newId } from '../ids.ts';
import type { EmailInbox, EmailInboxCreate, EmailInboxPatch } from '../schemas/email-inboxes.ts';

interface InboxRow { id: string; agent_id: string; address: string; sender_name: string; created_at: Date; updated_at: Date }

/** The unique index that holds each address once in the whole service. */
const ADDRESS_INDEX = 'email_inboxes_address';

/** Why a write was refused: the named agent is not a live agent of the organization, or the address is used. */
export type InboxRefusal = 'unknown_agent' | 'address_taken';

/** The API shape of an inbox row: the agent's id is the inbox's `widget_id`. */
export function toEmailInbox(row: InboxRow): EmailInbox {
  return {
    id: row.id, widget_id: row.agent_id, address: row.address, sender_name: row.sender_name,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** How every address is stored and compared. */
export function normalizeAddress(address: string): string {
  return address.trim().toLowerCase();
}

/**
 * Attaches an inbox to a live agent of the organization. One statement: the agent row is locked
 * (`for share`) so an agent DELETE running at the same time either waits for this inbox (and then
 * removes it) or wins and this insert finds no agent. A used address, even by a concurrent insert,
 * is refused through the unique index, never by a check that could race.
 */
export async function insertEmailInbox(db: Db, orgId: string, input: EmailInboxCreate): Promise<EmailInbox | InboxRefusal> {
  const [row] = await db<(Partial<InboxRow> & { agent_found: boolean })[]>`
    with agent as (
      select id from agents where id = ${input.widget_id} and org_id = ${orgId} and deleted_at is null for share
    ), inserted as (
      insert into email_inboxes (id, org_id, agent_id, address, sender_name)
      select ${newId()}, ${orgId}, agent.id, ${normalizeAddress(input.address)}, ${input.sender_name} from agent
      on conflict ((lower(address))) do nothing
      returning id, agent_id, address, sender_name, created_at, updated_at
    )
    select exists (select 1 from agent) as agent_found, inserted.*
    from (select 1) as one left join inserted on true`;
  if (!row?.agent_found) return 'unknown_agent';
  if (!row.id) return 'address_taken';
  return toEmailInbox(row as InboxRow);
}

/** The inbox in the organization, or null; an inbox of a deleted agent is gone. */
export async function findEmailInbox(db: Db, orgId: string, id: string): Promise<EmailInbox | null> {
  const [row] = await db<InboxRow[]>`
    select i.id, i.agent_id, i.address, i.sender_name, i.created_at, i.updated_at
    from email_inboxes i join agents a on a.id = i.agent_id and a.deleted_at is null
    where i.id = ${id} and i.org_id = ${orgId}`;
  return row ? toEmailInbox(row) : null;
}

/** A page of the organization's inboxes, newest first, optionally of one agent only. */
export async function listEmailInboxes(db: Db, orgId: string, q: { widget_id?: string | undefined; limit: number; offset: number }):
  Promise<{ data: EmailInbox[]; total: number }> {
  const agentFilter = q.widget_id ? db`and i.agent_id = ${q.widget_id}` : db``;
  return listPage(db, {
    ...q,
    columns: db`i.id, i.agent_id, i.address, i.sender_name, i.created_at, i.updated_at`,
    from: db`from email_inboxes i join agents a on a.id = i.agent_id and a.deleted_at is null where i.org_id = ${orgId} ${agentFilter}`,
    order: db`i.created_at desc, i.id desc`,
  }, toEmailInbox);
}

/**
 * Applies the fields present in `patch`; `widget_id` moves the inbox to another live agent of the
 * organization (locked as on insert). Checks in the API's order: the named agent (`unknown_agent`),
 * then the inbox (null when absent), then the address (`address_taken`, from the unique index).
 * Runs in a transaction of its own, or a savepoint of the caller's, so a refused address leaves
 * the caller's transaction usable.
 */
export async function updateEmailInbox(db: Db, orgId: string, id: string, patch: EmailInboxPatch): Promise<EmailInbox | null | InboxRefusal> {
  try {
    return await atomically(db, async (tx): Promise<EmailInbox | null | InboxRefusal> => {
      const fields: Record<string, unknown> = {};
      if (patch.widget_id !== undefined) {
        const [agent] = await tx`select id from agents
          where id = ${patch.widget_id} and org_id = ${orgId} and deleted_at is null for share`;
        if (!agent) return 'unknown_agent';
        fields.agent_id = patch.widget_id;
      }
      if (patch.address !== undefined) fields.address = normalizeAddress(patch.address);
      if (patch.sender_name !== undefined) fields.sender_name = patch.sender_name;
      if (Object.keys(fields).length === 0) return findEmailInbox(tx, orgId, id);
      const [row] = await tx<InboxRow[]>`
        update email_inboxes i set ${tx(fields)}, updated_at = now()
        from agents a
        where i.id = ${id} and i.org_id = ${orgId} and a.id = i.agent_id and a.deleted_at is null
        returning i.id, i.agent_id, i.address, i.sender_name, i.created_at, i.updated_at`;
      return row ? toEmailInbox(row) : null;
    });
  } catch (err) {
    if (isAddressTaken(err)) return 'address_taken';
    throw err;
  }
}

/** Deletes the inbox; false when absent (an inbox of a deleted agent is absent). */
export async function deleteEmailInbox(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`
    delete from email_inboxes i using agents a
    where i.id = ${id} and i.org_id = ${orgId} and a.id = i.agent_id and a.deleted_at is null
    returning i.id`;
  return rows.length > 0;
}

/**
 * Deletes every inbox of an agent, freeing their addresses at once. Call it in the agent DELETE
 * transaction: it locks the agent row first, so no inbox can be attached to the agent between
 * this delete and the commit. Returns how many were deleted.
 */
export async function deleteEmailInboxesOfAgent(db: Db, agentId: string): Promise<number> {
  const rows = await db`
    with agent as (select id from agents where id = ${agentId} for no key update)
    delete from email_inboxes where agent_id in (select id from agent) returning id`;
  return rows.length;
}

/** True for the unique violation of an address already used (by any organization). */
export function isAddressTaken(err: unknown): boolean {
  const e = err as Partial<postgres.PostgresError> | null;
  return e?.code === '23505' && e.constraint_name === ADDRESS_INDEX;
}

/** A transaction of its own on the pool, a savepoint inside the caller's transaction. */
function atomically<T>(db: Db, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return ('savepoint' in db ? db.savepoint(fn) : db.begin(fn)) as Promise<T>;
}

// ---- the email channel: inboxes by address, and the threads of email conversations

/** The inbox that receives mail for `address` (a live agent's), with its organization; null when none. */
export async function findInboxByAddress(db: Db, address: string): Promise<(EmailInbox & { org_id: string }) | null> {
  const [row] = await db<(InboxRow & { org_id: string })[]>`
    select i.id, i.org_id, i.agent_id, i.address, i.sender_name, i.created_at, i.updated_at
    from email_inboxes i join agents a on a.id = i.agent_id and a.deleted_at is null
    where lower(i.address) = ${normalizeAddress(address)}`;
  return row ? { ...toEmailInbox(row), org_id: row.org_id } : null;
}

/** The conversation of this inbox that one of `messageIds` belongs to (the newest such), or null. */
export async function findThreadConversation(db: Db, inboxId: string, messageIds: string[]): Promise<{ id: string; status: string } | null> {
  if (messageIds.length === 0) return null;
  const [row] = await db<{ id: string; status: string }[]>`
    select c.id, c.status from email_messages m join conversations c on c.id = m.conversation_id
    where m.email_inbox_id = ${inboxId} and m.message_id = any(${messageIds}::text[])
    order by c.started_at desc limit 1`;
  return row ?? null;
}

/** Whether this inbox has seen the message already (a redelivery). */
export async function emailMessageKnown(db: Db, inboxId: string, messageId: string): Promise<boolean> {
  const [row] = await db`select 1 from email_messages where email_inbox_id = ${inboxId} and message_id = ${messageId}`;
  return row !== undefined;
}

/**
 * Remembers a message of a thread; a message seen twice (a retried delivery) is false. An outbound
 * message is remembered before it is sent (its delivery status null until the send ends), so an
 * answer to it that arrives before the sending server's 250 still finds its thread.
 */
export async function recordEmailMessage(db: Db, input: { messageId: string; conversationId: string; inboxId: string; direction: 'in' | 'out' }): Promise<boolean> {
  const rows = await db`insert into email_messages (message_id, conversation_id, email_inbox_id, direction)
    values (${input.messageId}, ${input.conversationId}, ${input.inboxId}, ${input.direction})
    on conflict (email_inbox_id, message_id) do nothing returning message_id`;
  return rows.length > 0;
}

/** How an outbound message's delivery ended: `sent`, or `rejected` for good with the server's answer. */
export async function setEmailDelivery(db: Db, input: { inboxId: string; messageId: string; status: 'sent' | 'rejected'; error?: string | undefined }): Promise<void> {
  await db`update email_messages set delivery_status = ${input.status}, delivery_error = ${input.error ?? null}
    where email_inbox_id = ${input.inboxId} and message_id = ${input.messageId}`;
}

/** Why the agent may not answer automatically now: the thread's or the correspondent's hourly cap is reached. */
type AutoReplyRefusal = 'thread_cap' | 'sender_cap';

/**
 * Counts one automatic reply to `correspondent` in this conversation, unless the conversation had
 * `perThread` of them in the last hour or the correspondent `perSender` (all threads of the inbox):
 * then nothing is counted and the refusal says which. Serialized per inbox and correspondent with a
 * transaction-scoped advisory lock, so concurrent mails (on any replica) cannot both take the last one.
 */
export async function takeAutoReply(sql: Sql, input: {
  inboxId: string; correspondent: string; conversationId: string; perThread: number; perSender: number;
}): Promise<AutoReplyRefusal | null> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${`email-auto-reply:${input.inboxId}:${input.correspondent}`}, 0))`;
    await tx`delete from email_auto_replies where email_inbox_id = ${input.inboxId} and correspondent = ${input.correspondent}
      and created_at < now() - interval '1 hour'`;
    const [counts] = await tx<{ thread: number; sender: number }[]>`
      select
        (select count(*) from email_auto_replies where conversation_id = ${input.conversationId}
          and created_at >= now() - interval '1 hour')::int as thread,
        (select count(*) from email_auto_replies where email_inbox_id = ${input.inboxId} and correspondent = ${input.correspondent}
          and created_at >= now() - interval '1 hour')::int as sender`;
    if (counts!.thread >= input.perThread) return 'thread_cap';
    if (counts!.sender >= input.perSender) return 'sender_cap';
    await tx`insert into email_auto_replies (email_inbox_id, correspondent, conversation_id)
      values (${input.inboxId}, ${input.correspondent}, ${input.conversationId})`;
    return null;
  }) as Promise<AutoReplyRefusal | null>;
}

/** Ties a conversation to the inbox and correspondent it is held with. */
export async function setConversationEmail(db: Db, conversationId: string, input: { inboxId: string; address: string; subject: string }): Promise<void> {
  await db`update conversations set email_inbox_id = ${input.inboxId}, email_address = ${input.address}, email_subject = ${input.subject}
    where id = ${conversationId}`;
}

/** What a reply in an email conversation needs: where from, where to, the subject and the thread's ids (oldest first). */
export interface EmailThread {
  orgId: string; inboxId: string; address: string; senderName: string; to: string; subject: string; messageIds: string[]; lastInbound: string | null;
  /** The correspondent's first name, when their contact has one (the reply's salutation); the conversation's language. */
  firstName: string | null; language: string | null;
}

export async function findEmailThread(db: Db, conversationId: string): Promise<EmailThread | null> {
  const [row] = await db<{ org_id: string; inbox_id: string; address: string; sender_name: string; to: string; subject: string | null; first_name: string | null; language: string | null }[]>`
    select c.org_id, i.id as inbox_id, i.address, i.sender_name, c.email_address as to, c.email_subject as subject, ct.first_name, c.language
    from conversations c join email_inboxes i on i.id = c.email_inbox_id left join contacts ct on ct.id = c.contact_id
    where c.id = ${conversationId} and c.surface = 'email' and c.email_address is not null`;
  if (!row) return null;
  const ids = await db<{ message_id: string; direction: string }[]>`
    select message_id, direction from email_messages where conversation_id = ${conversationId} order by created_at, message_id`;
  const inbound = ids.filter((m) => m.direction === 'in');
  return {
    orgId: row.org_id, inboxId: row.inbox_id, address: row.address, senderName: row.sender_name, to: row.to, subject: row.subject ?? '',
    messageIds: ids.map((m) => m.message_id), lastInbound: inbound.at(-1)?.message_id ?? null, firstName: row.first_name, language: row.language,
  };
}
