import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { AppError, validationError } from '../errors.ts';
import {
  agentName, insertAgent, markAgentDeleted, planAgentChange, publishDraft, readAgentForChange, stageDraft, toWidget, updateAgent, writeAgentChange, type Draft,
} from '../db/agents.ts';
import { insertSite } from '../db/sites.ts';
import { voiceProfileHeld } from '../db/voice-profiles.ts';
import { llmProviderHeld } from '../db/llm-providers.ts';
import { startCrawl } from '../knowledge/crawls.ts';
import { checkSiteUrl } from '../knowledge/sites.ts';
import { assertOutboundUrl, outboundPolicy } from '../net/outbound.ts';
import { agentDeleteHooks } from './delete-hooks.ts';
import { emitEvent, prepareAgentEvent } from '../events/emit.ts';
import { statusChangeEvent } from '../events/types.ts';
import type { Agent, AgentPatch } from '../schemas/agents.ts';
import { purgeAgentKind } from '../../workflows/purge-agent.ts';
import { startWorkflow } from '../temporal/start.ts';
import { normalizePatch } from '../domain/agent-config.ts';
import { SHAPE_CHECKS } from '../validation.ts';
import { wakeCampaignsOfAgent } from '../campaigns/index.ts';
import type { FamilyDeps } from '../deps.ts';

/**
 * Changes to an agent that more than one endpoint makes (agents and widgets are one entity):
 * each runs in one transaction with the events it causes (their commit wakes the webhook dispatchers).
 */

export type AgentDeps = FamilyDeps;

/**
 * Creates an agent; with a website it starts in `draft`, its site is queued and the crawl starts
 * (its end makes the agent active with widget.ready or widget.crawl_completed, by `createdVia`).
 */
export async function createAgent(deps: AgentDeps, orgId: string, input: {
  name: string; site_url?: string | undefined; createdVia: 'agents' | 'widgets';
}): Promise<Agent> {
  if (input.site_url) await checkSiteUrl(deps, input.site_url, 'site_url');
  return deps.sql.begin(async (tx) => {
    const agent = await insertAgent(tx, orgId, { name: input.name, site_url: input.site_url, createdVia: input.createdVia });
    if (input.site_url) await startCrawl(deps, tx, await insertSite(tx, orgId, { url: input.site_url, agentId: agent.id }));
    return agent;
  });
}

/** The widget.* event payload: the agent and its widget view, both as their endpoints return them. */
export const agentEventData = (agent: Agent) => ({ agent, widget: toWidget(agent) });

/**
 * Validates a patch beyond its schema (normalization, timezone, variable names, and a
 * voice_profile_id and a model.provider_id that must name a profile and a provider of the organization) and answers its stored form.
 */
export async function checkAgentPatch(db: Db, orgId: string, patch: AgentPatch): Promise<AgentPatch> {
  const { patch: normalized, errors } = normalizePatch(patch);
  if (typeof patch.voice_profile_id === 'string') {
    // FOR SHARE: a concurrent delete of the profile waits for this transaction (and then detaches it).
    if (!(await voiceProfileHeld(db, orgId, patch.voice_profile_id))) errors.push({ field: 'voice_profile_id', code: 'unknown_voice_profile', message: 'voice_profile_id must name a voice profile of this organization' });
  }
  const providerId = patch.model?.provider_id;
  if (typeof providerId === 'string' && !(await llmProviderHeld(db, orgId, providerId))) {
    errors.push({ field: 'model.provider_id', code: 'unknown_llm_provider', message: 'model.provider_id must name an LLM provider of this organization' });
  }
  if (errors.length) throw validationError(errors);
  return normalized;
}

async function statusEvents(tx: Db, orgId: string, before: Agent, after: Agent): Promise<string[]> {
  const type = statusChangeEvent(before.status, after.status);
  return type ? [await emitEvent(tx, { orgId, type, data: agentEventData(after) })] : [];
}

/**
 * Checks a patch and applies it to the live configuration (pruning the draft), in one
 * transaction; null when there is no such agent.
 */
export async function changeAgent(deps: AgentDeps, orgId: string, id: string, body: AgentPatch): Promise<Agent | null> {
  await checkAgentImageUrls(deps.config, body);
  const result = (await changeAgentAtOnce(deps, orgId, id, body)) ?? await deps.sql.begin(async (tx) => {
    const patch = await checkAgentPatch(tx, orgId, body);
    const change = await updateAgent(tx, orgId, id, patch);
    if (!change) return null;
    return { agent: change.after, resumed: resumedFrom(change.before, change.after), eventIds: await statusEvents(tx, orgId, change.before, change.after) };
  });
  if (!result) return null;
  if (result.resumed) await wakeCampaignsOfAgent(deps, id);
  return result.agent;
}

/**
 * changeAgent's usual case in two statements, neither in a transaction (issue 48): the agent is read, the patch applied
 * in memory, and the update and its status event written by one statement, which holds only while the row is the
 * version read (so the outcome is the locked path's, had it run at that statement) and writes the event from the row it
 * updated (so the outbox row commits with the change, or neither does). Undefined when it cannot: the patch names a
 * voice profile or an LLM provider (their checks lock those rows in the change's transaction), or the row or its
 * redaction settings changed in between; the caller then takes the locked path, which decides everything afresh.
 */
async function changeAgentAtOnce(deps: AgentDeps, orgId: string, id: string, body: AgentPatch): Promise<{ agent: Agent; resumed: boolean } | null | undefined> {
  if (typeof body.voice_profile_id === 'string' || typeof body.model?.provider_id === 'string') return undefined;
  const { patch, errors } = normalizePatch(body);
  if (errors.length) throw validationError(errors);
  const snapshot = await readAgentForChange(deps.sql, orgId, id);
  if (!snapshot) return null;
  const { before } = snapshot;
  if (Object.keys(patch).length === 0) return { agent: before, resumed: false };
  const change = planAgentChange(snapshot, patch);
  const type = statusChangeEvent(before.status, change.after.status);
  const event = type
    ? prepareAgentEvent({ orgId, type, agentId: id, data: agentEventData(change.after) }, snapshot.redaction,
      agentEventData({ ...change.after, updated_at: before.updated_at }))
    : null;
  const agent = await writeAgentChange(deps.sql, change, event);
  if (!agent) return undefined;
  if (SHAPE_CHECKS) checkPlannedAgent(change.after, agent);
  return { agent, resumed: resumedFrom(before, agent) };
}

/** Test mode: the agent planned in memory (whose event was written) is the agent the update wrote, but for `updated_at`. */
function checkPlannedAgent(planned: Agent, written: Agent): void {
  const expected = JSON.stringify({ ...written, updated_at: null });
  const actual = JSON.stringify({ ...planned, updated_at: null });
  if (expected !== actual) throw new Error(`planned agent differs from the written one:\n  planned ${actual}\n  written ${expected}`);
}

/** Whether a change took the agent out of `paused`: its running campaigns, which held their calls, dial again. */
const resumedFrom = (before: Agent, after: Agent) => before.status === 'paused' && after.status !== 'paused';

/** Checks a patch and stages it on the pending draft, in one transaction; null when there is no such agent. */
export async function stageAgentDraft(deps: Pick<AgentDeps, 'sql' | 'config'>, orgId: string, id: string, body: AgentPatch): Promise<Draft | null> {
  await checkAgentImageUrls(deps.config, body);
  return deps.sql.begin(async (tx) => stageDraft(tx, orgId, id, await checkAgentPatch(tx, orgId, body)));
}

/**
 * The images the widget shows (`logo_url`, `launcher_icon_url`) are fetched by every visitor's
 * browser and by the simulation browser from the worker's network: like a webhook URL, they may not
 * name a private address (400 `private_network_target`, issue 40, D12) unless ALLOW_PRIVATE_NETWORK_TARGETS
 * or OUTBOUND_ALLOWED_HOSTS allow it. A name that does not resolve now is accepted: whoever loads it
 * later checks it again.
 */
export async function checkAgentImageUrls(config: Config, patch: AgentPatch, prefix = ''): Promise<void> {
  for (const field of ['logo_url', 'launcher_icon_url'] as const) {
    const url = patch[field];
    if (typeof url === 'string') await assertOutboundUrl(url, `${prefix}${field}`, { ...outboundPolicy(config), acceptUnresolvable: true });
  }
}

/**
 * Publishes the pending draft: its changes are checked again (a profile may have gone since
 * they were staged) and applied at once. 404 when the agent has no draft.
 */
export async function publishAgentDraft(deps: AgentDeps, orgId: string, id: string): Promise<Agent | null> {
  const result = await deps.sql.begin(async (tx) => {
    const published = await publishDraft(tx, orgId, id);
    if (!published) return null;
    if (!published.after || !published.changes) throw new AppError(404, 'not_found', 'this agent has no pending draft');
    await checkAgentPatch(tx, orgId, published.changes);
    return { agent: published.after, resumed: resumedFrom(published.before, published.after), eventIds: await statusEvents(tx, orgId, published.before, published.after) };
  });
  if (!result) return null;
  if (result.resumed) await wakeCampaignsOfAgent(deps, id);
  return result.agent;
}

/**
 * Hides the agent at once and starts its purge workflow in the same transaction: if Temporal
 * cannot take the workflow, nothing changes. With `deleteKbs`, the knowledge bases no other live
 * agent uses go too (shared ones never). False when there is no such agent.
 */
export async function deleteAgent(deps: AgentDeps, orgId: string, id: string, opts: { deleteKbs?: boolean } = {}): Promise<boolean> {
  const hooks = await agentDeleteHooks();
  const after = await deps.sql.begin(async (tx) => {
    if (!(await markAgentDeleted(tx, orgId, id))) return null;
    const todo = [];
    for (const hook of Object.values(hooks)) {
      const next = await hook(tx, { orgId, agentId: id, deleteKbs: opts.deleteKbs === true });
      if (next) todo.push(next);
    }
    await startPurge(deps, tx, orgId, id);
    return todo;
  });
  if (!after) return false;
  for (const next of after) await next(deps);
  return true;
}

async function startPurge(deps: AgentDeps, tx: Db, orgId: string, agentId: string): Promise<void> {
  const name = await agentName(tx, agentId);
  await startWorkflow(deps, purgeAgentKind, purgeAgentKind.id(agentId), [{ orgId, agentId, batchSize: deps.config.PURGE_BATCH_SIZE }],
    { orgId, agentId, summary: `Purge of deleted agent ${name ?? agentId}` });
}
