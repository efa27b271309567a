import { notFound } from '../../src/errors.ts';
import { findAgent } from '../../src/db/agents.ts';
import { acceptTrackingSuggestion, integrationRecommendations, RECOMMENDATION_MIN_EVIDENCE, SUGGESTION_MIN_CONVERSATIONS, trackingSuggestions } from '../../src/agents/insights.ts';
import { AgentSchema } from '../../src/schemas/agents.ts';
import { IdParams } from '../../src/schemas/common.ts';
import {
  IntegrationRecommendationListSchema, TrackingSuggestionAcceptSchema, TrackingSuggestionListSchema,
} from '../../src/schemas/agent-insights.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const agentInsightsFamily: RouteFamily = {
  base: BASE,
  order: 160,
  tag: 'Agent insights',
  description: 'What an agent should start tracking and which integration would pay off, computed on demand from its last 500 evaluated conversations and its configuration by stated rules.',
  routes: [
    route({
      method: 'GET', path: '/agents/:id/tracking-suggestions', operationId: 'list_tracking_suggestions', summary: 'Tracking rules the agent\'s conversations suggest',
      description: `Recurring intents and extracted fields (in at least ${SUGGESTION_MIN_CONVERSATIONS} of the last 500 evaluated conversations) that no \`tracking_rules\` entry covers yet (a rule covers a label when its name is the label or its condition mentions it). Each carries the ids of its conversations as evidence. Computed on each request.`,
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The suggestions, most frequent first', schema: TrackingSuggestionListSchema } },
      async handler({ params, principal, deps }) {
        const agent = await findAgent(deps.sql, principal.orgId, params.id);
        if (!agent) throw notFound('agent');
        return { status: 200, body: { data: await trackingSuggestions(deps.sql, agent) } };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/tracking-suggestions/accept', operationId: 'accept_tracking_suggestion', summary: 'Add a suggestion to the agent\'s tracking rules',
      description: 'Adds the current suggestion of that name to `tracking_rules` through the same checks and merge as PATCH (enabled). 404 when no current suggestion has the name; 409 `invalid_state` when the agent holds 50 rules already.',
      permissions: ['agents.write'], params: IdParams, body: TrackingSuggestionAcceptSchema,
      responses: { 200: { description: 'The agent with the new rule', schema: AgentSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await acceptTrackingSuggestion(deps, principal.orgId, params.id, body.name) };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/integration-recommendations', operationId: 'list_integration_recommendations', summary: 'Integrations the agent\'s conversations call for',
      description: `Rules over the last 500 evaluated conversations and the configuration, each needing at least ${RECOMMENDATION_MIN_EVIDENCE} conversations: booking intents → \`calendar\`; visitors asking for a person with no enabled transfer rule → \`phone_transfer\`; captured e-mail addresses or phone numbers with no enabled webhook subscribed to conversation events → \`crm_webhook\`. An agent with no evidence gets an empty list.`,
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The recommendations', schema: IntegrationRecommendationListSchema } },
      async handler({ params, principal, deps }) {
        if (!(await findAgent(deps.sql, principal.orgId, params.id))) throw notFound('agent');
        return { status: 200, body: { data: await integrationRecommendations(deps.sql, principal.orgId, params.id) } };
      },
    }),
  ],
};
