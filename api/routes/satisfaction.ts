import { notFound } from '../../src/errors.ts';
import { conversationInOrg, listConversationFeedback, satisfactionReport } from '../../src/db/feedback.ts';
import { IdParams } from '../../src/schemas/common.ts';
import { ConversationFeedbackSchema, SatisfactionQuery, SatisfactionReportSchema } from '../../src/schemas/feedback.ts';
import { route, type RouteFamily } from '../routing.ts';

export const satisfactionFamily: RouteFamily = {
  base: '/api/v1/rest',
  order: 125,
  tag: 'Satisfaction',
  description: 'What visitors thought: the end-of-chat rating (1 to 5, where the agent\'s `satisfaction_survey` asks for it) and thumbs '
    + 'up or down on replies, given through the widget; per conversation, and as CSAT per agent, member or team.',
  routes: [
    route({
      method: 'GET', path: '/conversations/:id/feedback', operationId: 'list_conversation_feedback', summary: 'A conversation\'s ratings and votes',
      permissions: ['conversations.read'], params: IdParams,
      responses: { 200: { description: 'Its feedback, oldest first', schema: ConversationFeedbackSchema } },
      async handler({ params, principal, deps }) {
        if (!(await conversationInOrg(deps.sql, principal.orgId, params.id))) throw notFound('conversation');
        return { status: 200, body: { data: await listConversationFeedback(deps.sql, principal.orgId, params.id) } };
      },
    }),
    route({
      method: 'GET', path: '/satisfaction', operationId: 'get_satisfaction_report', summary: 'CSAT per agent, member or team',
      description: 'Over the feedback given in `[from, to)` (default: all time): the number of ratings, their mean, CSAT (the share '
        + 'of 4s and 5s) and the thumbs up and down. `group_by=member` groups by the conversation\'s assigned member, `team` by its team.',
      permissions: ['conversations.read'], query: SatisfactionQuery,
      responses: { 200: { description: 'One row per agent, member or team', schema: SatisfactionReportSchema } },
      async handler({ query, principal, deps }) {
        const data = await satisfactionReport(deps.sql, principal.orgId, {
          groupBy: query.group_by ?? 'agent', ...(query.from ? { from: new Date(query.from) } : {}), ...(query.to ? { to: new Date(query.to) } : {}),
        });
        return { status: 200, body: { data } };
      },
    }),
  ],
};
