import type { Db } from '../db/index.ts';
import { findAgent } from '../db/agents.ts';
import { integrationEvidence, recurringUncovered, EVALUATED_WINDOW } from '../db/agent-insights.ts';
import { AppError, notFound } from '../errors.ts';
import type { Agent } from '../schemas/agents.ts';
import type { IntegrationRecommendation, TrackingSuggestion } from '../schemas/agent-insights.ts';
import { changeAgent, type AgentDeps } from './changes.ts';

/**
 * Tracking suggestions and integration recommendations: how an agent grows, read from its last
 * 500 evaluated conversations and its configuration by stated rules (README, "Agent
 * sub-resources"). Deterministic: the same data gives the same list, each item with its reason
 * and evidence.
 */

/** Conversations an intent or field must recur in before it is suggested. */
export const SUGGESTION_MIN_CONVERSATIONS = 3;
/** Conversations a rule must count before it recommends its integration. */
export const RECOMMENDATION_MIN_EVIDENCE = 3;
const MAX_TRACKING_RULES = 50;

const words = (label: string) => label.replace(/_/g, ' ');

/** The agent's suggestions, most frequent first. */
export async function trackingSuggestions(db: Db, agent: Agent): Promise<TrackingSuggestion[]> {
  const rules = (agent.tracking_rules ?? []).map((r) => ({ name: r.name, condition: r.condition }));
  const recurring = await recurringUncovered(db, agent.id, rules, SUGGESTION_MIN_CONVERSATIONS);
  return recurring.map((r) => r.kind === 'intent'
    ? {
      name: r.label.slice(0, 100),
      condition: `The visitor's intent is ${words(r.label)} (${r.label})`,
      reason: `intent ${r.label} in ${r.count} of the last ${EVALUATED_WINDOW} evaluated conversations, and no tracking rule covers it`,
      conversation_ids: r.conversationIds,
    }
    : {
      name: `captured_${r.label}`.slice(0, 100),
      condition: `The visitor gave their ${words(r.label)} (extracted field ${r.label})`,
      reason: `field ${r.label} extracted in ${r.count} of the last ${EVALUATED_WINDOW} evaluated conversations, and no tracking rule covers it`,
      conversation_ids: r.conversationIds,
    });
}

/**
 * Adds the named suggestion to the agent's tracking rules, through the same checks and merge as
 * PATCH `tracking_rules` (the whole list, the new rule last). 404 when no current suggestion has
 * that name; 409 `invalid_state` when the agent holds 50 rules already.
 */
export async function acceptTrackingSuggestion(deps: AgentDeps, orgId: string, agentId: string, name: string): Promise<Agent> {
  const agent = await findAgent(deps.sql, orgId, agentId);
  if (!agent) throw notFound('agent');
  const suggestion = (await trackingSuggestions(deps.sql, agent)).find((s) => s.name === name);
  if (!suggestion) throw notFound('tracking suggestion');
  const rules = agent.tracking_rules ?? [];
  if (rules.length >= MAX_TRACKING_RULES) throw new AppError(409, 'invalid_state', `the agent already has ${MAX_TRACKING_RULES} tracking rules, the most it may have`);
  const changed = await changeAgent(deps, orgId, agentId, {
    tracking_rules: [...rules, { name: suggestion.name, condition: suggestion.condition.slice(0, 1000), enabled: true }],
  });
  if (!changed) throw notFound('agent');
  return changed;
}

/** The integrations the agent's conversations and configuration call for, by the README's rules, in a fixed order. */
export async function integrationRecommendations(db: Db, orgId: string, agentId: string): Promise<IntegrationRecommendation[]> {
  const e = await integrationEvidence(db, orgId, agentId);
  const min = RECOMMENDATION_MIN_EVIDENCE;
  const out: IntegrationRecommendation[] = [];
  if (e.bookingIntents >= min) {
    out.push({ integration: 'calendar', evidence_count: e.bookingIntents, reason: `${e.bookingIntents} evaluated conversations had a booking intent (rule: at least ${min}): a calendar lets the agent book them` });
  }
  if (e.handoffRequests >= min && !e.hasTransferRule) {
    out.push({ integration: 'phone_transfer', evidence_count: e.handoffRequests, reason: `${e.handoffRequests} visitors asked for a person and the agent has no enabled transfer rule (rule: at least ${min})` });
  }
  if (e.contactCaptures >= min && !e.hasConversationWebhook) {
    out.push({ integration: 'crm_webhook', evidence_count: e.contactCaptures, reason: `${e.contactCaptures} conversations captured an e-mail address or phone number and no enabled webhook receives conversation events (rule: at least ${min})` });
  }
  return out;
}
