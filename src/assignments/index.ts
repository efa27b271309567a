import { WorkflowNotFoundError } from '@temporalio/client';
import type { Principal } from '../auth/authenticator.ts';
import type { Config } from '../config.ts';
import type { Db, Sql } from '../db/index.ts';
import {
  conversationAgentOf, insertAssignment, latestAssignmentTo, listAssignments, listQueue, lockWaiting, memberAvailability, nextMember, routedTeam, setAssignee,
  setRoutedTeam, waitingConversationIds, wasAssigned, type WaitingConversation,
} from '../db/assignments.ts';
import { findConversationRow } from '../db/conversations.ts';
import { findMemberRow } from '../db/members.ts';
import { insertMessages } from '../db/conversations.ts';
import { AppError, fieldError, notFound } from '../errors.ts';
import { emitEvent } from '../events/emit.ts';
import type { Assignment } from '../schemas/assignments.ts';
import { signalWithStart, type StartDeps } from '../temporal/start.ts';
import { assignConversationKind, pokeSignal } from '../../workflows/assign-conversation.ts';

/**
 * Assignment (issue 45). A conversation that asks for a person (a hand-off request, a transfer rule on
 * a text surface, an agent offering a person) gets a workflow, `assignment:<conversation id>`, which
 * assigns it round-robin to an online member of its routed team under their cap, or keeps it in the
 * queue, and moves it on when the assignee does not take it over in time or goes offline. Members and
 * keys assign, reassign and release by hand too; each step is recorded, and emitted as
 * `conversation.assigned` or `conversation.released`.
 */

type Deps = StartDeps & { sql: Sql; config: Pick<Config, 'ASSIGNMENT_ACCEPT_SECONDS' | 'ASSIGNMENT_RECHECK_SECONDS' | 'TASK_QUEUE_PREFIX'> };

/** Starts the conversation's assignment workflow, or wakes the one running. */
export async function requestPerson(deps: Deps, c: { id: string; orgId: string; agentId: string; isSimulated?: boolean }): Promise<void> {
  if (c.isSimulated) return;
  await signalWithStart(deps, assignConversationKind, assignConversationKind.id(c.id), [{
    conversationId: c.id, acceptSeconds: deps.config.ASSIGNMENT_ACCEPT_SECONDS, recheckSeconds: deps.config.ASSIGNMENT_RECHECK_SECONDS,
  }], { orgId: c.orgId, agentId: c.agentId, summary: `Assign conversation ${c.id} to a member` }, pokeSignal);
}

/** Wakes the conversation's assignment workflow when one runs (a take-over ends it at once); nothing otherwise. */
export async function pokeAssignment(deps: Pick<StartDeps, 'temporal' | 'log'>, conversationId: string): Promise<void> {
  try {
    await deps.temporal.workflow.getHandle(assignConversationKind.id(conversationId)).signal(pokeSignal);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    deps.log.warn({ err, conversation_id: conversationId }, 'could not wake the assignment workflow');
  }
}

/** Wakes the assignment of every conversation of the organization waiting for a person (a member came online, a team changed). */
export async function pokeWaitingConversations(deps: Deps, orgId: string): Promise<void> {
  const ids = await waitingConversationIds(deps.sql, orgId);
  const rows = await Promise.all(ids.map((id) => findConversationRow(deps.sql, id)));
  await Promise.all(rows.map((row) => (row ? requestPerson(deps, { id: row.id, orgId, agentId: row.widget_id }) : undefined)));
}

async function emitStep(tx: Db, c: WaitingConversation, assignment: Assignment): Promise<void> {
  const conversation = await findConversationRow(tx, c.id);
  await emitEvent(tx, {
    orgId: c.orgId, agentId: c.agentId, type: assignment.action === 'released' ? 'conversation.released' : 'conversation.assigned',
    data: { conversation, assignment },
  });
}

/** Assigns (or reassigns) `c` to `memberId` in the caller's transaction: the conversation, the history, the event and a system note. */
async function assignTo(tx: Db, c: WaitingConversation, member: { id: string; email: string }, reason: Assignment['reason'], by: string | null, teamId: string | null,
  note = `Assigned to ${member.email}`): Promise<Assignment> {
  const action = (await wasAssigned(tx, c.id)) ? 'reassigned' : 'assigned';
  await setAssignee(tx, c.id, member.id, teamId);
  const assignment = await insertAssignment(tx, { orgId: c.orgId, conversationId: c.id, action, memberId: member.id, teamId: teamId ?? c.teamId, reason, byMemberId: by });
  await insertMessages(tx, c.id, [{ role: 'system', text: note }]);
  await emitStep(tx, c, assignment);
  return assignment;
}

/**
 * Releases the assignee: the history's step and its event. The conversation goes back to the queue,
 * unless `requeue` is false (handed back to the agent); `keep` leaves the assignee named on an ended
 * conversation (who it ended with, for reports and CSAT per member: an ended one counts against no cap).
 */
async function releaseFrom(tx: Db, c: WaitingConversation, reason: Assignment['reason'], by: string | null,
  opts: { requeue?: boolean; keep?: boolean } = {}): Promise<Assignment> {
  const previous = c.assignedMemberId;
  if (!opts.keep) await setAssignee(tx, c.id, null, null, { requeue: opts.requeue ?? true });
  const assignment = await insertAssignment(tx, { orgId: c.orgId, conversationId: c.id, action: 'released', memberId: previous, teamId: c.teamId, reason, byMemberId: by });
  await emitStep(tx, c, assignment);
  return assignment;
}

const closedOf = (c: WaitingConversation | null): 'closed' | 'taken_over' | null => {
  if (!c || c.status !== 'active' || c.isSimulated) return 'closed';
  if (c.mode === 'human') return 'taken_over';
  if (!c.needsHuman && !c.assignedMemberId) return 'closed';
  return null;
};

export type NextStep = { outcome: 'closed' | 'taken_over' | 'queued' } | { outcome: 'assigned'; memberId: string; assignmentId: string };

/**
 * The workflow's decision, in one transaction under the conversation's lock: an assigned conversation
 * stays with its assignee (what an earlier, interrupted attempt committed counts); an unassigned one
 * goes to the next member round-robin, or waits.
 */
export async function assignNext(sql: Sql, input: { conversationId: string; exclude: string[] }): Promise<NextStep> {
  return sql.begin(async (tx) => {
    const c = await lockWaiting(tx, input.conversationId);
    const closed = closedOf(c);
    if (closed) return { outcome: closed };
    if (c!.assignedMemberId) {
      const step = await latestAssignmentTo(tx, c!.id, c!.assignedMemberId);
      return { outcome: 'assigned', memberId: c!.assignedMemberId, assignmentId: step?.id ?? `manual:${c!.assignedMemberId}` };
    }
    const teamId = await routedTeam(tx, c!.orgId, c!.agentId, c!.surface);
    await setRoutedTeam(tx, c!.id, teamId);
    const member = await nextMember(tx, { orgId: c!.orgId, agentId: c!.agentId, teamId }, input.exclude);
    if (!member) return { outcome: 'queued' };
    const assignment = await assignTo(tx, c!, member, 'round_robin', null, teamId);
    return { outcome: 'assigned', memberId: member.id, assignmentId: assignment.id };
  });
}

/**
 * After the assignee's wait: taken over, closed, still theirs (reassigned by hand counts as changed),
 * or released because they did not take it over in time or are no longer online. An assignee chosen
 * by a person is kept: only round-robin picks time out or follow availability.
 */
export async function checkAssignee(sql: Sql, input: { conversationId: string; memberId: string; timedOut: boolean }):
  Promise<'closed' | 'taken_over' | 'kept' | 'changed' | 'released'> {
  return sql.begin(async (tx) => {
    const c = await lockWaiting(tx, input.conversationId);
    const closed = closedOf(c);
    if (closed) return closed;
    if (c!.assignedMemberId !== input.memberId) return c!.assignedMemberId ? 'changed' : 'released';
    // A person chose this assignee (by hand, or the inbox's assign action): only round-robin picks time out or follow availability.
    const step = await latestAssignmentTo(tx, c!.id, input.memberId);
    if (!step || step.reason === 'manual') return 'kept';
    const availability = await memberAvailability(tx, input.memberId);
    if (availability === 'online' && !input.timedOut) return 'kept';
    await releaseFrom(tx, c!, availability === 'online' ? 'timeout' : 'offline', null);
    return 'released';
  });
}

/**
 * Ends the conversation's assignment, in the caller's transaction under the conversation's lock
 * (lockWaiting): `closed` (the conversation was closed: the assignee stays named on it) or
 * `handed_back` (a member gave it back to the agent: no longer anyone's, nor queued). Answers the
 * release step, or null when nobody held it.
 */
export async function endAssignment(tx: Db, c: WaitingConversation, reason: 'closed' | 'handed_back', by: string | null): Promise<Assignment | null> {
  if (!c.assignedMemberId) return null;
  return releaseFrom(tx, c, reason, by, { requeue: false, keep: reason === 'closed' });
}

/** Assigns by hand: to `memberId`, or (none given) to the next available member round-robin; 409 `invalid_state` when nobody is free. */
export async function assignByHand(deps: Deps, principal: Principal, conversationId: string, memberId: string | undefined): Promise<Assignment> {
  const assignment = await deps.sql.begin(async (tx) => {
    const member = memberId ? await findMemberRow(tx, principal.orgId, memberId) : null;
    if (memberId && !member) throw fieldError('member_id', 'unknown_member', 'member_id is not a member of this organization');
    const c = await lockWaiting(tx, conversationId, principal.orgId);
    if (!c || !inScope(principal, c.agentId)) throw notFound('conversation');
    if (c.status !== 'active' || c.isSimulated) throw new AppError(409, 'invalid_state', 'the conversation has ended: it cannot be assigned');
    if (member) return assignLockedTo(tx, c, member, principal.memberId);
    const teamId = c.teamId ?? await routedTeam(tx, c.orgId, c.agentId, c.surface);
    const next = await nextMember(tx, { orgId: c.orgId, agentId: c.agentId, teamId }, c.assignedMemberId ? [c.assignedMemberId] : []);
    if (!next) throw new AppError(409, 'invalid_state', 'no member is online with room for another conversation');
    return assignTo(tx, c, next, 'round_robin', principal.memberId, teamId);
  });
  // The workflow follows the new assignee (and starts, for a conversation nobody had asked a person for).
  const row = await findConversationRow(deps.sql, conversationId);
  if (row) await requestPerson(deps, { id: row.id, orgId: principal.orgId, agentId: row.widget_id });
  if (assignment) return assignment;
  return (await listAssignments(deps.sql, conversationId)).filter((a) => a.action !== 'released').at(-1)!;
}

/**
 * Assigns `c` (locked by lockWaiting) by hand to `member` of its organization, in the caller's transaction:
 * the conversation, the history, `conversation.assigned` and a system note (`note`, else "Assigned to …").
 * Null when it is theirs already. The caller wakes the workflow after commit (requestPerson).
 */
export async function assignLockedTo(tx: Db, c: WaitingConversation, member: { id: string; email: string }, by: string | null, note?: string): Promise<Assignment | null> {
  if (c.assignedMemberId === member.id) return null;
  const teamId = c.teamId ?? await routedTeam(tx, c.orgId, c.agentId, c.surface);
  return assignTo(tx, c, member, 'manual', by, teamId, note);
}

/** Releases the conversation back to the queue; 409 `invalid_state` when nobody holds the assignment. */
export async function releaseByHand(deps: Deps, principal: Principal, conversationId: string): Promise<Assignment> {
  const assignment = await deps.sql.begin(async (tx) => {
    const c = await lockWaiting(tx, conversationId, principal.orgId);
    if (!c || !inScope(principal, c.agentId)) throw notFound('conversation');
    if (!c.assignedMemberId) throw new AppError(409, 'invalid_state', 'the conversation is not assigned');
    return releaseFrom(tx, c, 'released', principal.memberId);
  });
  // The released conversation looks for another member, and the slot freed may take a waiting one.
  await pokeWaitingConversations(deps, principal.orgId);
  return assignment;
}

/** Whether the principal sees conversations of this agent (an operator serving some agents sees only theirs). */
export function inScope(principal: Pick<Principal, 'agentScope'>, agentId: string): boolean {
  return !principal.agentScope || principal.agentScope.includes(agentId);
}

export async function queueOf(sql: Sql, principal: Principal, q: { assigned?: '0' | '1' | 'all'; team_id?: string }) {
  const rows = await listQueue(sql, principal.orgId, { assigned: q.assigned ?? '0', teamId: q.team_id, agentScope: principal.agentScope });
  return rows.map((r) => ({ ...r, queued_at: r.queued_at.toISOString() }));
}

export async function historyOf(sql: Sql, principal: Principal, conversationId: string): Promise<Assignment[]> {
  await assertInScope(sql, principal, conversationId);
  return listAssignments(sql, conversationId);
}

/** 404 unless the conversation is the organization's and in the principal's scope. */
export async function assertInScope(db: Db, principal: Pick<Principal, 'orgId' | 'agentScope'>, conversationId: string): Promise<void> {
  const agentId = await conversationAgentOf(db, principal.orgId, conversationId);
  if (!agentId || !inScope(principal, agentId)) throw notFound('conversation');
}
