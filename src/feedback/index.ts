import type { Db, Sql } from '../db/index.ts';
import { upsertRating, upsertThumbs } from '../db/feedback.ts';
import { findConversationRow } from '../db/conversations.ts';
import { AppError, notFound } from '../errors.ts';
import { emitEvent } from '../events/emit.ts';
import type { Feedback } from '../schemas/feedback.ts';

/** The conversation a visitor's feedback is about, as the public endpoints found it (token checked). */
export interface FeedbackTarget { orgId: string; agentId: string; conversationId: string; surveyEnabled: boolean }

/** Stores the feedback and its `conversation.feedback` event in one transaction. */
async function record(sql: Sql, target: FeedbackTarget, write: (tx: Db) => Promise<Feedback | null>): Promise<Feedback | null> {
  return sql.begin(async (tx) => {
    const feedback = await write(tx);
    if (!feedback) return null;
    const conversation = await findConversationRow(tx, target.conversationId);
    await emitEvent(tx, { orgId: target.orgId, agentId: target.agentId, type: 'conversation.feedback', data: { feedback, conversation } });
    return feedback;
  });
}

/**
 * The end-of-chat rating (1 to 5, optional comment), replacing the visitor's earlier one. Only where the
 * agent asks for it (`satisfaction_survey`): 409 `invalid_state` otherwise.
 */
export async function rateConversation(sql: Sql, target: FeedbackTarget, input: { rating: number; comment?: string | null | undefined }): Promise<Feedback> {
  if (!target.surveyEnabled) throw new AppError(409, 'invalid_state', 'this agent does not ask for a rating (its satisfaction_survey is off)');
  const comment = input.comment?.trim() || null;
  return (await record(sql, target, (tx) => upsertRating(tx, target, input.rating, comment)))!;
}

/** A thumbs up or down on one of the agent's (or a member's) replies in the conversation; 404 for any other message. */
export async function voteOnReply(sql: Sql, target: FeedbackTarget, messageId: string, input: { thumbs: 'up' | 'down'; comment?: string | null | undefined }): Promise<Feedback> {
  const comment = input.comment?.trim() || null;
  const feedback = await record(sql, target, (tx) => upsertThumbs(tx, target, messageId, input.thumbs, comment));
  if (!feedback) throw notFound('reply');
  return feedback;
}
